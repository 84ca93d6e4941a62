# Session 19: Gemma 4 31B Q4_K_M and GPT-OSS 20B MXFP4_MOE (synthetic) with this session's code: pp512, tg128.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
pp() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], d['verify'].get('ok'), [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $1 || tail -3 ${1%.json}.log; }
(python3 -m zinc.synth gpt-oss-20b -o .real/oss.gguf --ftype MXFP4_MOE -q > $OUT/r/synth-oss.log 2>&1) &
(python3 -m zinc.synth gemma4-31b -o .real/g4.gguf --ftype Q4_K_M -q > $OUT/r/synth-g4.log 2>&1) &
wait
timeout 150 python3 -m zinc.cli bench -m .real/oss.gguf --backend cuda -p 512 -n 128 -r 3 --json > $OUT/r/oss.json 2> $OUT/r/oss.log; pp $OUT/r/oss.json
timeout 180 python3 -m zinc.cli bench -m .real/g4.gguf --backend cuda -p 512 -n 128 -r 3 --json > $OUT/r/g4.json 2> $OUT/r/g4.log; pp $OUT/r/g4.json
tar czf $OUT/s19j.tgz -C $OUT r && rm -rf $OUT/r
