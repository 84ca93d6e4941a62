# Session 5, call 2 (carry .gl): CUDA tests on the H200 for the changed kernels/ops, then Qwen3-8B CUDA
# bench at depths 0/4096/16384 + step profile, Qwen3.5-35B-A3B bench + step profile.
. bench/gpu_env.sh
mkdir -p .real
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1; python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > $OUT/synth35.log 2>&1) &
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_fused_attn.py tests/backends/test_cuda_flash.py tests/backends/test_cuda_rope.py tests/backends/test_cuda_dense.py tests/backends/test_cuda_experts_glu.py tests/backends/test_cuda_recurrent.py tests/backends/test_cuda_graph.py tests/backends/test_cuda_mmvq.py tests/backends/test_cuda_moe_mmvq.py tests/backends/test_cuda_kernels.py 2>&1 | tail -4
while [ ! -f .real/q8b.gguf ]; do sleep 2; done; sleep 3
timeout 150 sh -c "$Z bench -m .real/q8b.gguf --backend cuda -p 512 -n 128 -d 0,4096,16384 -r 2 --json" > $OUT/bench-cuda.json 2> $OUT/bench-cuda.log; grep -v running $OUT/bench-cuda.log | grep "run 2\|verified\|rror"
timeout 40 python3 bench/cuda_step_profile.py .real/q8b.gguf --out $OUT 2>&1 | sed -n 1,9p
wait
timeout 150 sh -c "$Z bench -m .real/q35.gguf --backend cuda -p 512 -n 128 -r 2 --json" > $OUT/bench-q35.json 2> $OUT/bench-q35.log; grep -v running $OUT/bench-q35.log | tail -4
mkdir -p $OUT/q35 && timeout 60 python3 bench/cuda_step_profile.py .real/q35.gguf --out $OUT/q35 2>&1 | sed -n 1,16p
