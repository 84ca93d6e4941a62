# Session 12, call 4: Qwen3.5-35B-A3B pp512 A/B on one machine, interleaved (grouped expert GEMM / the paths before
# it); where its prompt time goes now; the new ops-level GPU test.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real
(python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &)
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_experts_gemm.py -rf --tb=line 2>&1 | tail -2
pp() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], d['verify'].get('ok'), [(t['name'], round(t['tok_s']), round(t['tok_s_sd'])) for t in d['tests']])" $1; }
while [ ! -f .real/q35.gguf ] || pgrep -f zinc.synth > /dev/null; do sleep 2; done
for i in 1 2; do
timeout 70 python3 -m zinc.cli bench -m .real/q35.gguf --backend cuda -p 512 -n 0 -r 3 --json > $OUT/q35-pp-gemm-$i.json 2>/dev/null; pp $OUT/q35-pp-gemm-$i.json
timeout 70 python3 bench/cuda_cfg_bench.py - --no-experts-gemm bench -m .real/q35.gguf --backend cuda -p 512 -n 0 -r 3 --json > $OUT/q35-pp-before-$i.json 2>/dev/null; pp $OUT/q35-pp-before-$i.json
done
timeout 90 python3 bench/cuda_prefill_profile.py .real/q35.gguf --out $OUT 2>&1 | grep -v Warn | head -26
