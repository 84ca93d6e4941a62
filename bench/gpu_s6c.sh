# Session 6, call 3: why PDL failed test_tiny_model_and_graph_decode and slowed decode (364 vs 418 tok/s):
# the failing assertion, PDL modes on the tiny model and Qwen3-8B (bench/cuda_pdl_diag.py), PTX order.
. bench/gpu_env.sh
mkdir -p .real
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &
python3 -m zinc.synth qwen3-tiny -o .real/tiny.gguf --ftype Q4_K_M --seed 7 -q > /dev/null 2>&1
timeout 100 python3 -m pytest -q -p no:cacheprovider "tests/backends/test_cuda_graph.py::test_tiny_model_and_graph_decode" 2>&1 | grep -E "^E |passed|failed" | head -12
wait
timeout 300 python3 bench/cuda_pdl_diag.py .real/tiny.gguf .real/q8b.gguf 2>&1 | grep -v Warn | tail -40
