# Session 28, call b: the decode split loop's TMA form (ops.ATTN_TMA) in the decode step against the plain loop:
# the GPU tests of both forms, then tg128, tg128@4096 and tg128@16384 A/B pairs in fresh processes
# (bench/cuda_tree_ab.py), the TMA form also with other split rows; on an H200 last `zinc bench` of the faster form.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
[ -f .real/q8b.gguf ] || python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1 &
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_kernels.py tests/backends/test_cuda_rope.py -k "attention or tma" 2>&1 | tail -3
wait
ab() { timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log | cut -c1-100; }
ab --label t0
ab --label tma --set ATTN_TMA=True
ab --label tma64 --set ATTN_TMA=True --set "ATTN_SPLITS=[(256,2,64),(2048,8,64),(8192,16,64),(4611686018427387904,16,128)]"
ab --label d0 --depth 16384
ab --label dtma --depth 16384 --set ATTN_TMA=True
ab --label m0 --depth 4096
ab --label mtma --depth 4096 --set ATTN_TMA=True
python3 bench/cuda_tree_ab.py --compare $OUT/r/ab/tree-t0.npz $OUT/r/ab/tree-tma.npz 2>&1 | tail -8
rm -f $OUT/r/ab/*.npz
