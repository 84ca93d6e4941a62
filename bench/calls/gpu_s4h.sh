# Session 4 (carry .gl): Vulkan decode at depth 0 and 4096 on main after the chunked-attention trial was reverted.
. bench/gpu_env.sh
mkdir -p .real
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1
timeout 150 sh -c "$Z bench -m .real/q8b.gguf --backend vulkan -p 0 -n 128 -d 0,4096 -r 2 --json" > $OUT/bench-vulkan.json 2> $OUT/bench-vulkan.log; grep "run 2\|verified" $OUT/bench-vulkan.log
