# Session 6, call 7 (carry .gl): the Vulkan device greedy loop (VulkanOps.greedy_steps): Vulkan tests on the
# H200, zinc bench tg128 (Model.greedy) at depths 0 and 4096, and matvec config sets interleaved with the defaults.
. bench/gpu_env.sh
mkdir -p .real
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/backends/test_vulkan.py tests/backends/test_vulkan_greedy.py tests/backends/test_vulkan_mvq_xs.py 2>&1 | tail -2
wait
timeout 150 sh -c "$Z bench -m .real/q8b.gguf --backend vulkan -p 512 -n 128 -d 0,4096 -r 2 --json" > $OUT/bench-vulkan.json 2> $OUT/bench-vulkan.log; grep -v running $OUT/bench-vulkan.log | grep "run 2\|verified\|rror"
timeout 200 python3 bench/vulkan_decode_configs.py .real/q8b.gguf 2>&1 | grep -v XDG | tail -30
