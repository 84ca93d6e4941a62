# Session 30, call g: unrolled rows for 256-2,047 cells at depth 1024 again (call f: 16 of 64 cells 427.9 against 426.2).
. bench/calls/ab_env.sh
R="(8192,16,64),($L,16,128)]"
ab --label d1k16x64u --depth 1024 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64,0),$R"
ab --label d1k --depth 1024
ab --label d1k8x64u --depth 1024 --set "ATTN_SPLITS=[(256,8,16,0),(2048,8,64,0),$R"
ab --label d1k16x64u2 --depth 1024 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64,0),$R"
ab --label d1kb --depth 1024
rm -f $OUT/r/ab/*.npz
