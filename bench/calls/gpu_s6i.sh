# Session 6, call 10 (trial, reverted: one GPU test failed after it and no device time was left to find which): Qwen3.5-35B-A3B CUDA decode after remembering two quantized inputs (one quantize launch
# fewer per MoE layer); CUDA tests of the matvec input cache.
. bench/gpu_env.sh
mkdir -p .real
python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_mmvq.py tests/backends/test_cuda_recurrent.py tests/backends/test_cuda_graph.py -x 2>&1 | tail -2
wait
timeout 150 sh -c "$Z bench -m .real/q35.gguf --backend cuda -p 512 -n 128 -r 2 --json" > $OUT/bench-q35.json 2> $OUT/bench-q35.log; grep -v running $OUT/bench-q35.log | grep "run 2\|verified\|rror"
