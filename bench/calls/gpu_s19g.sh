# Session 19: the engine reusing finished requests' caches (bench/cuda_engine_reuse.py, reused vs fresh caches:
# time to first token, decode tok/s, graphs captured); Qwen3-8B tg128 at depth 4096 and 16384 with the driver-API
# graphs; the engine tests on the GPU machine.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
res() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], [(t['name'], t['depth'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $1 || tail -3 ${1%.json}.log; }
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1
for f in "" --fresh; do timeout 120 python3 bench/cuda_engine_reuse.py .real/q8b.gguf $f --out $OUT/r/e 2>&1 | grep request; done
timeout 300 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 4096,16384 -r 3 --json > $OUT/r/q8b-deep.json 2> $OUT/r/q8b-deep.log; res $OUT/r/q8b-deep.json
tar czf $OUT/s19g.tgz -C $OUT r && rm -rf $OUT/r
