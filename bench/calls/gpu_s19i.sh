# Session 19, final: graph.py's replays without the per-step signature (the same cache object) and the sampler's
# one-pass check: the graph tests, the engine's decode (cProfile again), zinc bench Qwen3-8B, every family's tiny
# model against NumPy.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
pp() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], d['verify'].get('ok'), [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $1; }
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_graph.py 2>&1 | tail -2
wait
timeout 150 python3 bench/cuda_engine_reuse.py .real/q8b.gguf --requests 3 --tokens 200 --profile --out $OUT/r/e > $OUT/r/prof.log 2>&1; grep -v -i warn $OUT/r/prof.log | grep -v "^$" | cut -c1-150 | grep "request\|function calls\|api.py\|to_numpy\|graph.py\|_sample\|begin\|make"
timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 512,2048 -n 128 -r 3 --json > $OUT/r/q8b.json 2> $OUT/r/q8b.log; pp $OUT/r/q8b.json
timeout 200 python3 -m zinc.backends.cuda.check_families --out $OUT/r --ftypes F16,Q8_0,Q4_K_M 2>&1 | grep -v Warn | grep -v " ok$" | tail -4
tar czf $OUT/s19i.tgz -C $OUT r && rm -rf $OUT/r
