# Session 37, call b (any card): at depth, the combine and the output projection launched early behind the split
# (ops.ATTN_PDL (wait, trigger) of split, combine; the tree's ((0,0),(0,1)) launches the combine when the split has
# exited). Split trigger 1: the combine may launch at the split's start, 3: after each split program's loop; the
# combine then waits (griddepcontrol.wait) before any load and triggers at its start, so the output projection's
# programs launch too and load their first weights while the split streams its cells. Session 25 measured
# ((0,1),(1,1)) only on a short cache (2,332.8 against 2,310.0 us); never at depth, where the split runs ~17-28 us a
# layer. A 128-cell cache's clustered splits take the same launches in every row (so tg128 should not move).
export AB_TIMEOUT=${AB_TIMEOUT:-150} AB_COLS=${AB_COLS:-170}
. bench/calls/ab_env.sh
date
ab --label t16k --depth 16384
ab --label s1c1 --depth 16384 --set "ATTN_PDL=((0,1),(1,1))"
ab --label s3c1 --depth 16384 --set "ATTN_PDL=((0,3),(1,1))"
ab --label t16k2 --depth 16384
ab --label s1c1b --depth 16384 --set "ATTN_PDL=((0,1),(1,1))"
ab --label s3c1b --depth 16384 --set "ATTN_PDL=((0,3),(1,1))"
date
ab --label t4k --depth 4096
ab --label s1c1_4k --depth 4096 --set "ATTN_PDL=((0,1),(1,1))"
ab --label s3c1_4k --depth 4096 --set "ATTN_PDL=((0,3),(1,1))"
date
