# Session 16, call 4: Qwen3.5-35B-A3B tg128 472 after its prompts in zinc bench (518 in session 15, whose prompts were
# eager, pairs matvec): the decode fresh and after prompts in one process (bench/cuda_tg_after_pp.py), and zinc bench
# with the prompt's experts not through the grouped GEMM (tensor cores) for A/B.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1
timeout 150 python3 bench/cuda_tg_after_pp.py .real/q35.gguf --out $OUT/r 2>&1 | grep -v -i warn | tail -12
pp() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], d['verify'].get('ok'), [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $1; }
timeout 120 python3 bench/cuda_cfg_bench.py - --no-experts-gemm bench -m .real/q35.gguf --backend cuda -p 512 -n 128 -r 3 --json > $OUT/r/q35-no-gemm.json 2>/dev/null; pp $OUT/r/q35-no-gemm.json
tar czf $OUT/s16d.tgz -C $OUT r && rm -rf $OUT/r
