# Session 30, call j: depth 4096 (4,224 cells), 32 / 24 splits of 64 cells pipelined against the tree's 16.
. bench/calls/ab_env.sh
ab --label d4k --depth 4096
ab --label d4k32 --depth 4096 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64),(8192,32,64),($L,16,128)]"
ab --label d4k24 --depth 4096 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64),(8192,24,64),($L,16,128)]"
rm -f $OUT/r/ab/*.npz
