# Session 26, call f (the H200s were taken; an H100): the split rows adopted from call d (16 splits of 64 cells for
# 2,048-8,192 cells, 16 of 128 past that) against the rows before (16 of 128, 32 of 64) at tg128@16384 and
# tg128@4096 (fresh processes, one machine). Prepared in session 26, not run (no machine came).
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
ab() { timeout 60 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log | cut -c1-80; }
O="ATTN_SPLITS=[(256,4,32),(2048,8,64),(8192,16,128),(4611686018427387904,32,64)]"
ab --label d1 --depth 16384
ab --label dold --depth 16384 --set "$O"
ab --label m1 --depth 4096
ab --label mold --depth 4096 --set "$O"
rm -f $OUT/r/ab/*.npz
