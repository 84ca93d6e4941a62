# Session 28, call d (call c cut down to the device time left): the TMA split loop against the plain one as kernels
# at 16,512 and 128 cells (bench/cuda_attn_swab.py --quick), then tg128 in the decode step (A/B in fresh processes,
# logits compared).
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
[ -f .real/q8b.gguf ] || python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1 &
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 150 python3 bench/cuda_attn_swab.py --quick --out $OUT/r 2>&1 | grep -v Warning | tail -30
wait
ab() { timeout 60 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log | cut -c1-100; }
ab --label t0
ab --label tma --set ATTN_TMA=True
python3 bench/cuda_tree_ab.py --compare $OUT/r/ab/tree-t0.npz $OUT/r/ab/tree-tma.npz 2>&1 | tail -8
rm -f $OUT/r/ab/*.npz
