# Session 20, final: the combine's whole-head / 32-dims rule (COMBINE_WHOLE): the kernel tests on the GPU, zinc bench
# Qwen3-8B tg128 at depth 16384 (32 splits: 32 dims a program).
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
pp() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], d['verify'].get('ok'), [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $1 || tail -3 ${1%.json}.log; }
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_kernels.py 2>&1 | tail -2
wait
timeout 120 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 16384 -r 3 --json > $OUT/r/deep.json 2> $OUT/r/deep.log; pp $OUT/r/deep.json
tar czf $OUT/s20h.tgz -C $OUT r && rm -rf $OUT/r
