# Session 8, call 2 (carry .gl, .snap): rope_qk_attention with one token's angles computed once per program (the
# first form computed them for each of the 16 padded rows: split kernel 3.8 -> 8.2 us); tests, A/B, profile.
. bench/gpu_env.sh
mkdir -p .real
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_rope.py tests/backends/test_cuda_ops_more.py tests/backends/test_cuda_kernels.py 2>&1 | tail -2
wait
ab tg 2 "-m .real/q8b.gguf --backend cuda -p 0 -n 128 -r 2" HEAD 577bc8a
timeout 40 python3 bench/cuda_step_profile.py .real/q8b.gguf --out $OUT 2>&1 | sed -n 2,8p
