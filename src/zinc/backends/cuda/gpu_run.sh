#!/bin/sh
# One device call: GPU kernel tests, profile, tiny models, then the Qwen3-8B bench (see profile.py).
export PYTHONPATH=src PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi -L
python3 -c "import torch, triton, numpy; print('torch', torch.__version__, 'triton', triton.__version__, 'numpy', numpy.__version__)"
python3 -m zinc.synth qwen3-8b -o /tmp/q8b.gguf --ftype Q4_K_M -q > "$OUT/synth.log" 2>&1 &
python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_kernels.py 2>&1 | tail -4
python3 -m zinc.backends.cuda.profile --out "$OUT" --skip "$SKIP" 2>&1 | tee "$OUT/profile.log"
wait
python3 -m zinc.backends.cuda.profile --out "$OUT/graph" --skip check,matvec,prefill,small,tiny --model /tmp/q8b.gguf 2>&1 | tail -12
python3 -c 'import sys; from zinc.cli import main; sys.exit(main(sys.argv[1:]))' bench -m /tmp/q8b.gguf --backend cuda \
  -p 512 -n 128 --json > "$OUT/bench.json" 2> "$OUT/bench.log"
tail -5 "$OUT/bench.log"; python3 -c "import json; r=json.load(open('$OUT/bench.json')); print([(t['name'], round(t['tok_s'],1)) for t in r['tests']])"
