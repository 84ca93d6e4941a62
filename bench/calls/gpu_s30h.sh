# Session 30, call h: depth 1024, 16 splits of 64 cells pipelined (3 stages) against unrolled, and the tree's row.
. bench/calls/ab_env.sh
R="(8192,16,64),($L,16,128)]"
ab --label d1k16x64p --depth 1024 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64),$R"
ab --label d1k16x64u --depth 1024 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64,0),$R"
ab --label d1k16x32p --depth 1024 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,32),$R"
ab --label d1k --depth 1024
rm -f $OUT/r/ab/*.npz
