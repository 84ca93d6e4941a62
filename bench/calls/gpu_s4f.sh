# Session 4, final numbers (carry .gl) at cb491a5 (GLU 8-bit output and Vulkan norm-in-matvec reverted):
# Qwen3-8B CUDA bench at depths 0/4096/16384 + step profile, Vulkan bench, Qwen3.5-35B-A3B CUDA bench.
. bench/gpu_env.sh
mkdir -p .real
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &
python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &
while [ ! -f .real/q8b.gguf ]; do sleep 2; done; sleep 3
timeout 150 sh -c "$Z bench -m .real/q8b.gguf --backend cuda -p 512 -n 128 -d 0,4096,16384 -r 2 --json" > $OUT/bench-cuda.json 2> $OUT/bench-cuda.log; grep "run 2\|verified" $OUT/bench-cuda.log
timeout 40 python3 bench/cuda_step_profile.py .real/q8b.gguf --out $OUT 2>&1 | sed -n 1,10p
timeout 100 sh -c "$Z bench -m .real/q8b.gguf --backend vulkan -p 512 -n 128 -r 2 --json" > $OUT/bench-vulkan.json 2> $OUT/bench-vulkan.log; grep "run 2\|verified" $OUT/bench-vulkan.log
wait
timeout 200 sh -c "$Z bench -m .real/q35.gguf --backend cuda -p 512 -n 128 -r 3 --json" > $OUT/bench-q35.json 2> $OUT/bench-q35.log; grep "run \|verified" $OUT/bench-q35.log
