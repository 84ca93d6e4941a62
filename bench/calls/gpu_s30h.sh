# Session 30, call h: depth 1024, 16 splits of 64 cells pipelined (3 stages) against unrolled, and the tree's row.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
[ -f .real/q8b.gguf ] || python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1
ab() { timeout 110 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log | cut -c1-100; }
L=4611686018427387904
R="(8192,16,64),($L,16,128)]"
ab --label d1k16x64p --depth 1024 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64),$R"
ab --label d1k16x64u --depth 1024 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64,0),$R"
ab --label d1k16x32p --depth 1024 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,32),$R"
ab --label d1k --depth 1024
rm -f $OUT/r/ab/*.npz
