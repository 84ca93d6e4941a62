# Session 15, call 3: why tg128 ran at 461 after pp512 + pp2048 in one `zinc bench` process (487.7 alone):
# bench/cuda_tg_after_pp.py (tg on fresh / after-prompt caches, with kernel totals); the graph tests after the cache
# signature took the tensors' shapes.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &)
timeout 100 python3 -m pytest -q -x -p no:cacheprovider tests/backends/test_cuda_graph.py 2>&1 | tail -2
while [ ! -f .real/q8b.gguf ] || pgrep -f zinc.synth > /dev/null; do sleep 2; done
timeout 200 python3 bench/cuda_tg_after_pp.py .real/q8b.gguf --out $OUT 2>&1 | grep -v -i warn
