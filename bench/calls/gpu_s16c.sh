# Session 16, call 3: the grouped experts GEMM with f16 tiles from the ints' bits, the swapped operand order for
# blocks of <= 32 pairs (and MXFP4), blocks of twice the mean pairs: GPU tests, the MoE tiny families against the
# NumPy backend, zinc bench of Qwen3.5-35B-A3B and GPT-OSS 20B, Qwen3.5's prompt profile.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
(python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q; python3 -m zinc.synth gpt-oss-20b -o .real/oss.gguf --ftype MXFP4_MOE -q) > $OUT/r/synth.log 2>&1 &
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_experts_gemm.py \
  tests/backends/test_cuda_experts_glu.py tests/backends/test_cuda_ops_more.py -rf --tb=line 2>&1 | tail -3
timeout 120 python3 -m zinc.backends.cuda.check_families --out $OUT/r --families qwen3moe-tiny,qwen35moe-tiny,gemma4moe-tiny,gpt-oss-tiny \
  --ftypes Q4_K_M,MXFP4_MOE 2>&1 | grep -v Warn | tail -9
pp() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], d['verify'].get('ok'), [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $1; }
while pgrep -f zinc.synth > /dev/null; do sleep 2; done
timeout 150 python3 -m zinc.cli bench -m .real/q35.gguf --backend cuda -p 512,2048 -n 128 -r 3 --json > $OUT/r/q35.json 2> $OUT/r/q35.log; pp $OUT/r/q35.json
timeout 90 python3 -m zinc.cli bench -m .real/oss.gguf --backend cuda -p 512 -n 0 -r 3 --json > $OUT/r/oss.json 2> $OUT/r/oss.log; pp $OUT/r/oss.json
timeout 90 python3 bench/cuda_prefill_profile.py .real/q35.gguf --tokens 512 --runs 3 --out $OUT/r 2>&1 | grep -v -i warn | head -24
tar czf $OUT/s16c.tgz -C $OUT r && rm -rf $OUT/r
