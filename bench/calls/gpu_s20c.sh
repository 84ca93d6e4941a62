# Session 20: the session's code (weights-first mmvs loop, the engine's greedy chunks): GPU tests, zinc bench
# Qwen3-8B (pp512, pp2048, tg128; tg128 at depths 4096 and 16384), the engine's decode with greedy chunks.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
pp() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], d['verify'].get('ok'), [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $1 || tail -3 ${1%.json}.log; }
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
timeout 240 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_graph.py tests/backends/test_cuda_mmvq.py tests/backends/test_cuda_moe_mmvq.py 2>&1 | tail -2
wait
timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 512,2048 -n 128 -r 3 --json > $OUT/r/q8b.json 2> $OUT/r/q8b.log; pp $OUT/r/q8b.json
timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 4096,16384 -r 3 --json > $OUT/r/q8b-deep.json 2> $OUT/r/q8b-deep.log; pp $OUT/r/q8b-deep.json
timeout 120 python3 bench/cuda_engine_reuse.py .real/q8b.gguf --requests 3 --tokens 200 --out $OUT/r/e 2>&1 | grep -v -i warn | tail -3
timeout 120 python3 bench/cuda_engine_reuse.py .real/q8b.gguf --requests 3 --tokens 200 --greedy-chunk 1 --out $OUT/r/e1 2>&1 | grep -v -i warn | tail -3
tar czf $OUT/s20c.tgz -C $OUT r && rm -rf $OUT/r
