# Session 20: the session's code on Qwen3.5-35B-A3B (its routed experts take the same mmvs loop) and every family's
# tiny model against NumPy.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
pp() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], d['verify'].get('ok'), [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $1 || tail -3 ${1%.json}.log; }
(python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
timeout 230 python3 -m zinc.backends.cuda.check_families --out $OUT/r --ftypes F16,Q8_0,Q4_K_M 2>&1 | grep -v Warn | grep -v " ok$" | tail -4
wait
timeout 200 python3 -m zinc.cli bench -m .real/q35.gguf --backend cuda -p 512,2048 -n 128 -r 3 --json > $OUT/r/q35.json 2> $OUT/r/q35.log; pp $OUT/r/q35.json
tar czf $OUT/s20d.tgz -C $OUT r && rm -rf $OUT/r
