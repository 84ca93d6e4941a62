# Session 30, call j: depth 4096 (4,224 cells), 32 / 24 splits of 64 cells pipelined against the tree's 16.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
[ -f .real/q8b.gguf ] || python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1
ab() { timeout 110 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log | cut -c1-100; }
L=4611686018427387904
ab --label d4k --depth 4096
ab --label d4k32 --depth 4096 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64),(8192,32,64),($L,16,128)]"
ab --label d4k24 --depth 4096 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64),(8192,24,64),($L,16,128)]"
rm -f $OUT/r/ab/*.npz
