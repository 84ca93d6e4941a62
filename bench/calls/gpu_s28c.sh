# Session 28, call c (calls a and b in one, cut down: machines are scarce): the TMA split loop against the plain one
# as kernels (bench/cuda_attn_swab.py --quick), in the decode step (A/B pairs at tg128 and tg128@16384, with the
# logits compared), and the GPU tests of both forms.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
[ -f .real/q8b.gguf ] || python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1 &
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 200 python3 bench/cuda_attn_swab.py --quick --out $OUT/r 2>&1 | grep -v Warning | tail -30
wait
ab() { timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log | cut -c1-100; }
ab --label t0
ab --label tma --set ATTN_TMA=True
python3 bench/cuda_tree_ab.py --compare $OUT/r/ab/tree-t0.npz $OUT/r/ab/tree-tma.npz 2>&1 | tail -8
ab --label d0 --depth 16384
ab --label dtma --depth 16384 --set ATTN_TMA=True
rm -f $OUT/r/ab/*.npz
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_kernels.py tests/backends/test_cuda_rope.py -k "tma or test_attention or rope_qk_attention" 2>&1 | tail -3
