# Session 30, call f: around the new short-cache row: 2 / 8 warps, the dynamic loop without its pipeline (1 stage),
# and unrolled rows for 256-2,047 cells at depth 1024 (a chat's cache), against the rows in the tree.
. bench/calls/ab_env.sh
R="(8192,16,64),($L,16,128)]"
ab --label w2 --set "ATTN_SPLITS=[(256,8,16,0,2),(2048,8,64),$R"
ab --label s1 --set "ATTN_SPLITS=[(256,8,16,1),(2048,8,64),$R"
ab --label d1k --depth 1024
ab --label d1k16x32u --depth 1024 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,32,0),$R"
ab --label d1k16x64u --depth 1024 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64,0),$R"
ab --label w8 --set "ATTN_SPLITS=[(256,8,16,0,8),(2048,8,64),$R"
rm -f $OUT/r/ab/*.npz
