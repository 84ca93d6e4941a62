# Session 5, call 4 (carry .gl): final numbers after the revert of the fused attention and the decode-only
# experts GLU kernel: GPU-only tests, Qwen3-8B CUDA bench at depths 0/4096/16384 + step profile, Qwen3.5 bench.
. bench/gpu_env.sh
mkdir -p .real
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1; python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > $OUT/synth35.log 2>&1) &
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_experts_glu.py tests/backends/test_cuda_graph.py tests/backends/test_cuda_recurrent.py tests/backends/test_cuda_dense.py tests/backends/test_cuda_ops_more.py -m "slow or not slow" 2>&1 | tail -3
while [ ! -f .real/q8b.gguf ]; do sleep 2; done; sleep 3
timeout 150 sh -c "$Z bench -m .real/q8b.gguf --backend cuda -p 512 -n 128 -d 0,4096,16384 -r 2 --json" > $OUT/bench-cuda.json 2> $OUT/bench-cuda.log; grep -v running $OUT/bench-cuda.log | grep "run 2\|verified\|rror"
timeout 40 python3 bench/cuda_step_profile.py .real/q8b.gguf --out $OUT 2>&1 | sed -n 1,9p
wait
timeout 120 sh -c "$Z bench -m .real/q35.gguf --backend cuda -p 512 -n 128 -r 2 --json" > $OUT/bench-q35.json 2> $OUT/bench-q35.log; grep -v running $OUT/bench-q35.log | grep "run 2\|rror"
