# Session 38, call a: on an H200, session 37's call a (gpu_s37a.sh: zinc bench of the tree, deep-cache A/Bs); on an
# H100, the GPU tests of the engine's prompt caching (a cache cut back in place, prompt chunks at any position, then
# the captured decode graph) with the graph tests beside them.
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then exec bash bench/calls/gpu_s37a.sh; fi
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p $OUT/r
timeout 400 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_graph.py tests/engine/test_prompt_cache.py \
  2>&1 | tail -15
# a chat's next turns on Qwen3-8B Q4_K_M (4,000-token first prompt, 16-token replies, 50 new ids a turn): the time to
# first token from the finished turn's cache, then computing each prompt afresh
[ -f .real/q8b.gguf ] || { mkdir -p .real; python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q; }
for f in "" --no-prompt-cache; do timeout 120 python3 bench/cuda_engine_reuse.py .real/q8b.gguf --requests 4 --prompt 4000 \
  --tokens 16 --chat 50 $f --out $OUT/keep 2>&1 | grep request; done
