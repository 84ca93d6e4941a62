# Session 5, call 5 (carry .gl): trial, reverted: the Vulkan matvec walks (mvq, mvq_glu) written out per step
# (KLOOP): Vulkan tests passed (90), but tg128 196.0 -> 176.7 and pp512 269 -> 139.
. bench/gpu_env.sh
mkdir -p .real
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/backends/test_vulkan.py 2>&1 | tail -2
wait
timeout 120 sh -c "$Z bench -m .real/q8b.gguf --backend vulkan -p 512 -n 128 -d 0,4096 -r 2 --json" > $OUT/bench-vulkan.json 2> $OUT/bench-vulkan.log; grep -v running $OUT/bench-vulkan.log | grep "run \|verified\|rror"
