# Session 29, call b (call a cut to ~4 min for a session short of device time): one decode-step A/B pair at depth
# 16384 (each run also times tg128 on a 128-cell cache) of the TMA split loop (ops.ATTN_TMA) against the plain loop,
# the logits compared, then the GPU tests of both forms.
# Needs `git apply bench/wip/attn-tma-swab.patch` first: the TMA form left the backend after session 29's kernel rows.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
[ -f .real/q8b.gguf ] || python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1
ab() { timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log | cut -c1-110; }
ab --label d0 --depth 16384
ab --label dtma --depth 16384 --set ATTN_TMA=True
python3 bench/cuda_tree_ab.py --compare $OUT/r/ab/tree-d0.npz $OUT/r/ab/tree-dtma.npz 2>&1 | tail -8
rm -f $OUT/r/ab/*.npz
tail -5 $OUT/r/err.log
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_kernels.py tests/backends/test_cuda_rope.py -k "tma" 2>&1 | tail -3
