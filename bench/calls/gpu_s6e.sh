# Session 6, calls 5-6 (carry .gl): Vulkan decode tok/s per matvec configuration set (bench/vulkan_decode_configs.py;
# the sweep's per-shape bests (chain timing), GLU configs, activations staged in workgroup memory.
. bench/gpu_env.sh
mkdir -p .real
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1
timeout 400 python3 bench/vulkan_decode_configs.py .real/q8b.gguf 2>&1 | grep -v XDG | tail -12
