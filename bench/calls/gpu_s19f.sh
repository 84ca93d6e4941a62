# Session 19: graph.py captures through the driver API (DriverGraph): six decode graphs on six caches, all as fast as
# the first? the graph tests and every family's tiny model against NumPy; zinc bench Qwen3-8B and Qwen3.5-35B-A3B.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
pp() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], d['verify'].get('ok'), [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $1; }
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1; python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q >> $OUT/r/synth.log 2>&1) &
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_graph.py 2>&1 | tail -3
while [ ! -s .real/q8b.gguf ]; do sleep 1; done; sleep 2
timeout 100 python3 bench/cuda_graph_count.py --graphs 0 --model .real/q8b.gguf --out $OUT/r/g > $OUT/r/count.log 2>&1; grep "decode graph" $OUT/r/count.log | tr '\n' ' '; echo; tail -3 $OUT/r/count.log | grep -i error
wait
timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 512,2048 -n 128 -r 3 --json > $OUT/r/q8b.json 2> $OUT/r/q8b.log; pp $OUT/r/q8b.json; tail -2 $OUT/r/q8b.log
timeout 200 python3 -m zinc.cli bench -m .real/q35.gguf --backend cuda -p 512,2048 -n 128 -r 3 --json > $OUT/r/q35.json 2> $OUT/r/q35.log; pp $OUT/r/q35.json; tail -2 $OUT/r/q35.log
timeout 200 python3 -m zinc.backends.cuda.check_families --out $OUT/r --ftypes F16,Q8_0,Q4_K_M 2>&1 | grep -v Warn | grep -v " ok$" | tail -5
python3 -c "import json; print('not captured:', [(r['family'], r['ftype']) for r in json.load(open('$OUT/r/check_families.json'))['rows'] if r.get('graph_captures') == 0])"
tar czf $OUT/s19f.tgz -C $OUT r && rm -rf $OUT/r
