# Session 4, call 4 (carry .gl, .snap = HEAD be74a00 + ops.py wiring of the rope_qk / router kernels):
# CUDA tests on the GPU, Qwen3-8B bench + step profile, Qwen3.5-35B-A3B bench, Vulkan profile + bench.
SRC=.snap/src . bench/gpu_env.sh
mkdir -p .real
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1; python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > $OUT/synth35.log 2>&1) &
(cd .snap && timeout 300 python3 -m pytest -q -x -p no:cacheprovider tests/backends/test_cuda_rope.py tests/backends/test_cuda_recurrent.py tests/backends/test_cuda_kernels.py tests/backends/test_cuda_graph.py tests/backends/test_cuda_ops_more.py tests/backends/test_cuda_mmvq.py 2>&1 | tail -4)
while [ ! -f .real/q8b.gguf ]; do sleep 2; done; sleep 3
timeout 100 sh -c "$Z bench -m .real/q8b.gguf --backend cuda -p 512 -n 128 -r 3 --json" > $OUT/bench-cuda.json 2> $OUT/bench-cuda.log; tail -3 $OUT/bench-cuda.log
timeout 40 python3 .snap/bench/cuda_step_profile.py .real/q8b.gguf --out $OUT 2>&1 | sed -n 1,14p
timeout 60 python3 -m zinc.backends.vulkan.profile .real/q8b.gguf --json $OUT/vk-prof.json 2>&1 | sed -n 2,14p
timeout 100 sh -c "$Z bench -m .real/q8b.gguf --backend vulkan -p 512 -n 128 -r 2 --json" > $OUT/bench-vulkan.json 2> $OUT/bench-vulkan.log; tail -2 $OUT/bench-vulkan.log
wait
timeout 200 sh -c "$Z bench -m .real/q35.gguf --backend cuda -p 512 -n 128 -r 2 --json" > $OUT/bench-q35.json 2> $OUT/bench-q35.log; tail -3 $OUT/bench-q35.log
