# Session 30, call f: around the new short-cache row: 2 / 8 warps, the dynamic loop without its pipeline (1 stage),
# and unrolled rows for 256-2,047 cells at depth 1024 (a chat's cache), against the rows in the tree.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
[ -f .real/q8b.gguf ] || python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1
ab() { timeout 110 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log | cut -c1-100; }
L=4611686018427387904
R="(8192,16,64),($L,16,128)]"
ab --label w2 --set "ATTN_SPLITS=[(256,8,16,0,2),(2048,8,64),$R"
ab --label s1 --set "ATTN_SPLITS=[(256,8,16,1),(2048,8,64),$R"
ab --label d1k --depth 1024
ab --label d1k16x32u --depth 1024 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,32,0),$R"
ab --label d1k16x64u --depth 1024 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64,0),$R"
ab --label w8 --set "ATTN_SPLITS=[(256,8,16,0,8),(2048,8,64),$R"
rm -f $OUT/r/ab/*.npz
