# Session 10, call 6: the shared expert folded for decode steps only (prompts keep its own weights, uploaded too):
# fold and MoE tests and the tiny families on the GPU, then Qwen3.5-35B-A3B Q4_K_M pp512 + tg128 (fresh process).
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
Z="python3 -c 'import sys; from zinc.cli import main; sys.exit(main(sys.argv[1:]))'"
mkdir -p .real
[ -f .real/q35.gguf ] || (python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &)
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/models/test_fold_shared_expert.py tests/backends/test_cuda_experts_glu.py \
  "tests/backends/test_cuda_ops_more.py::test_tiny_family" 2>&1 | tail -2
while [ ! -f .real/q35.gguf ] || pgrep -f zinc.synth > /dev/null; do sleep 2; done
timeout 150 sh -c "$Z bench -m .real/q35.gguf --backend cuda -p 512 -n 128 -r 3 --json" > $OUT/bench-q35.json 2> $OUT/bench-q35.log; grep -v running $OUT/bench-q35.log | grep "run 3\|verified\|rror"
