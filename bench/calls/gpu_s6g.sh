# Session 6, call 8 (carry .gl, .snap): final checks: CUDA GPU tests (graphs, recurrent, families, experts GLU,
# dense), Vulkan tests on the H200, Vulkan bench (v10: -r 3), the Vulkan profile (host time per token of the
# device greedy loop), and pp512 of the session-start code (.snap/05cd6c3) for the prefill variance.
. bench/gpu_env.sh
mkdir -p .real
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &
timeout 220 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_graph.py tests/backends/test_cuda_recurrent.py tests/backends/test_cuda_ops_more.py tests/backends/test_cuda_experts_glu.py tests/backends/test_cuda_dense.py tests/models/test_cache_recurrent.py -m "slow or not slow" 2>&1 | tail -2
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/backends/test_vulkan.py tests/backends/test_vulkan_steps.py tests/backends/test_vulkan_mvq_xs.py -m "slow or not slow" 2>&1 | tail -2
wait
timeout 150 sh -c "$Z bench -m .real/q8b.gguf --backend vulkan -p 512 -n 128 -d 0,4096 -r 3 --json" > $OUT/bench-vulkan.json 2> $OUT/bench-vulkan.log; grep -v running $OUT/bench-vulkan.log | grep "run 3\|verified\|rror"
timeout 90 python3 -m zinc.backends.vulkan.profile .real/q8b.gguf -n 24 --profile-steps 4 --json $OUT/vulkan-profile.json 2>&1 | grep -v XDG | head -4
PYTHONPATH=$PWD/.snap/05cd6c3/src timeout 100 sh -c "$Z bench -m .real/q8b.gguf --backend vulkan -p 512 -n 0 -r 3 --json" > $OUT/bench-vulkan-05cd6c3-pp.json 2> $OUT/bench-vulkan-old.log; grep -v running $OUT/bench-vulkan-old.log | grep "run 3\|rror"
