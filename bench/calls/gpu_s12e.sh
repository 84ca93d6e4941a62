# Session 12, call 5: why Qwen3.5-35B-A3B's pp512 did not follow the grouped expert GEMM's kernel time: prefill
# profiles with and without it, on a prompt-sized cache and on zinc bench's 4096 cells; the bench A/B once more.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real
python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > /dev/null 2>&1
for ctx in 520 4096; do for f in "" --no-experts-gemm; do
timeout 60 python3 bench/cuda_prefill_profile.py .real/q35.gguf --ctx $ctx $f --out $OUT 2>&1 | grep -v -i warn | head -11
done; done
pp() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], d['verify'].get('ok'), [(t['name'], round(t['tok_s']), round(t['tok_s_sd'])) for t in d['tests']])" $1; }
timeout 60 python3 -m zinc.cli bench -m .real/q35.gguf --backend cuda -p 512 -n 0 -r 5 --json > $OUT/q35-pp-gemm-3.json 2>/dev/null; pp $OUT/q35-pp-gemm-3.json
timeout 60 python3 bench/cuda_cfg_bench.py - --no-experts-gemm bench -m .real/q35.gguf --backend cuda -p 512 -n 0 -r 5 --json > $OUT/q35-pp-before-3.json 2>/dev/null; pp $OUT/q35-pp-before-3.json
