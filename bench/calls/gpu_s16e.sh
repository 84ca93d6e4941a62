# Session 16, call 5: (1) the chunked delta rule in three launches (chunk_prep_kernel with the gates and q/k norms,
# torch's triangular solve, chunk_state_kernel): GPU tests, the hybrid tiny families, zinc bench and the prompt
# profile of Qwen3.5-35B-A3B; (2) the decode slowdown after the grouped experts GEMM against the context's
# local-memory reservation (bench/cuda_tg_lmem.py).
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
(python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
timeout 170 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_recurrent.py tests/backends/test_cuda_graph.py -rf --tb=short 2>&1 | tail -12
timeout 60 python3 -m zinc.backends.cuda.check_families --out $OUT/r --families qwen35-tiny,qwen35moe-tiny --ftypes Q4_K_M,Q8_0 2>&1 | grep -v Warn | tail -5
pp() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], d['verify'].get('ok'), [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $1; }
while pgrep -f zinc.synth > /dev/null; do sleep 2; done
timeout 120 python3 -m zinc.cli bench -m .real/q35.gguf --backend cuda -p 512,2048 -n 128 -r 3 --json > $OUT/r/q35.json 2> $OUT/r/q35.log; pp $OUT/r/q35.json
timeout 60 python3 bench/cuda_prefill_profile.py .real/q35.gguf --tokens 512 --runs 3 --out $OUT/r 2>&1 | grep -v -i warn | head -16
timeout 90 python3 bench/cuda_tg_lmem.py .real/q35.gguf --out $OUT/r 2>&1 | grep -v -i warn | tail -8
tar czf $OUT/s16e.tgz -C $OUT r && rm -rf $OUT/r
