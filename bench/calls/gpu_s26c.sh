# Session 26, call c: the decode attention on one f16 operand each for its query rows and probabilities (the backend's
# default now; calls a, b measured it as ATTN_HILO=False): zinc bench JSON (pp512 + tg128, tg128@16384), every
# family's tiny model at every file type against the NumPy backend, and the GPU tests of the attention files.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
pp() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], d['verify'].get('ok'), [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $1 || tail -3 ${1%.json}.log; }
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1 &
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 280 python3 -m zinc.backends.cuda.check_families --out $OUT/r > $OUT/r/families.log 2>&1; tail -3 $OUT/r/families.log
grep -v " ok$" $OUT/r/families.log | head -8
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_kernels.py tests/backends/test_cuda_rope.py tests/backends/test_cuda_gptoss.py 2>&1 | tail -3
wait
timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 512 -n 128 -r 3 --json > $OUT/r/bench.json 2> $OUT/r/bench.log; pp $OUT/r/bench.json
timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 16384 -r 3 --json > $OUT/r/deep.json 2> $OUT/r/deep.log; pp $OUT/r/deep.json
