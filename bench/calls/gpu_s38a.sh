# Session 38, call a: on an H200, session 37's call a (gpu_s37a.sh: zinc bench of the tree, deep-cache A/Bs); on an
# H100, the GPU tests of the engine's prompt caching (a cache cut back in place, prompt chunks at any position, then
# the captured decode graph) with the graph tests beside them.
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then exec bash bench/calls/gpu_s37a.sh; fi
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/r
timeout 400 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_graph.py tests/engine/test_prompt_cache.py \
  2>&1 | tail -15
