# Session 4 (carry .gl): Vulkan tests + bench after the chunked decode attention (5ef61af).
. bench/gpu_env.sh
mkdir -p .real
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/backends/test_vulkan.py 2>&1 | tail -2
wait
timeout 150 sh -c "$Z bench -m .real/q8b.gguf --backend vulkan -p 512 -n 128 -d 0,4096 -r 2 --json" > $OUT/bench-vulkan.json 2> $OUT/bench-vulkan.log; grep "run 2\|verified" $OUT/bench-vulkan.log
timeout 60 python3 -m zinc.backends.vulkan.profile .real/q8b.gguf 2>&1 | sed -n 2,8p
