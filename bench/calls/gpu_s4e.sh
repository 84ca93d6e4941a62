# Session 4, last call (carry .gl): CUDA + Vulkan tests on the H200 after the GLU 8-bit output, the
# Vulkan norm-in-matvec and the DeltaNet step kernels; Qwen3-8B CUDA bench at depths 0/4096/16384 + step
# profile; Vulkan bench + profile; GPT-OSS 20B (MXFP4_MOE) and Qwen3.5-35B-A3B CUDA benches.
. bench/gpu_env.sh
mkdir -p .real
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &
python3 -m zinc.synth gpt-oss-20b -o .real/oss.gguf --ftype MXFP4_MOE -q > $OUT/synth-oss.log 2>&1 &
python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > $OUT/synth-q35.log 2>&1 &
timeout 240 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_mmvq.py tests/backends/test_cuda_gptoss.py tests/backends/test_cuda_graph.py tests/backends/test_cuda_recurrent.py tests/backends/test_cuda_ops_more.py tests/backends/test_cuda_rope.py 2>&1 | tail -3
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/backends/test_vulkan.py 2>&1 | tail -3
while [ ! -f .real/q8b.gguf ]; do sleep 2; done; sleep 3
timeout 150 sh -c "$Z bench -m .real/q8b.gguf --backend cuda -p 512 -n 128 -d 0,4096,16384 -r 2 --json" > $OUT/bench-cuda.json 2> $OUT/bench-cuda.log; grep -v running $OUT/bench-cuda.log | grep "run 2\|verified"
timeout 40 python3 bench/cuda_step_profile.py .real/q8b.gguf --out $OUT 2>&1 | sed -n 1,10p
timeout 100 sh -c "$Z bench -m .real/q8b.gguf --backend vulkan -p 512 -n 128 -r 2 --json" > $OUT/bench-vulkan.json 2> $OUT/bench-vulkan.log; tail -3 $OUT/bench-vulkan.log
timeout 60 python3 -m zinc.backends.vulkan.profile .real/q8b.gguf 2>&1 | sed -n 2,12p
wait
timeout 150 sh -c "$Z bench -m .real/oss.gguf --backend cuda -p 512 -n 128 -r 2 --json" > $OUT/bench-oss.json 2> $OUT/bench-oss.log; tail -5 $OUT/bench-oss.log
timeout 150 sh -c "$Z bench -m .real/q35.gguf --backend cuda -p 512 -n 128 -r 2 --json" > $OUT/bench-q35.json 2> $OUT/bench-q35.log; tail -4 $OUT/bench-q35.log
