# Session 12, call 2: the grouped expert GEMM for prompts (kernels.moe.experts_gemm): GPU tests, the MoE tiny
# families against the NumPy backend, the kernel against the paths before it, Qwen3.5-35B-A3B pp512 A/B.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real
(python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &)
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_experts_gemm.py \
  tests/backends/test_cuda_experts_glu.py tests/backends/test_cuda_ops_more.py -rf --tb=line 2>&1 | tail -3
timeout 150 python3 -m zinc.backends.cuda.check_families --out $OUT --families qwen3moe-tiny,qwen35moe-tiny,gemma4moe-tiny,gpt-oss-tiny \
  --ftypes Q4_K_M,MXFP4_MOE 2>&1 | grep -v Warn | tail -9
timeout 180 python3 bench/cuda_experts_gemm_bench.py --out $OUT 2>&1 | grep -v Warn | tail -16
while [ ! -f .real/q35.gguf ] || pgrep -f zinc.synth > /dev/null; do sleep 2; done
timeout 90 python3 -m zinc.cli bench -m .real/q35.gguf --backend cuda -p 512 -n 0 -r 3 --json > $OUT/q35-pp-gemm.json 2> $OUT/q35-pp-gemm.log
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['verify'].get('ok'), [(t['name'], round(t['tok_s']), round(t['tok_s_sd'])) for t in d['tests']])" $OUT/q35-pp-gemm.json; tail -2 $OUT/q35-pp-gemm.log
timeout 90 python3 bench/cuda_cfg_bench.py - --no-experts-gemm bench -m .real/q35.gguf --backend cuda -p 512 -n 0 -r 3 --json > $OUT/q35-pp-before.json 2>/dev/null
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['verify'].get('ok'), [(t['name'], round(t['tok_s']), round(t['tok_s_sd'])) for t in d['tests']])" $OUT/q35-pp-before.json
