# Prepared in session 16 for the next one (not run yet). (1) GPU tests of the recurrent kernels (conv1d_tiles_kernel,
# new in session 16 and not yet GPU-run; the raw chunked delta rule's test at its 3e-5 bound) and the graph tests;
# (2) the hybrid tiny families (qwen35-tiny Q8_0 agreed on 30 of 31 sure positions after chunk_prep_kernel, mean KL
# 8.7e-5); (3) zinc bench and the prompt profile of Qwen3.5-35B-A3B (session 16: pp512 10,201 before conv1d_tiles).
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
(python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
timeout 170 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_recurrent.py tests/backends/test_cuda_graph.py -rf --tb=short 2>&1 | tail -6
timeout 80 python3 -m zinc.backends.cuda.check_families --out $OUT/r --families qwen35-tiny,qwen35moe-tiny --ftypes Q8_0,Q4_K_M,Q6_K,F16 2>&1 | grep -v Warn | tail -9
pp() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], d['verify'].get('ok'), [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $1; }
while pgrep -f zinc.synth > /dev/null; do sleep 2; done
timeout 120 python3 -m zinc.cli bench -m .real/q35.gguf --backend cuda -p 512,2048 -n 128 -r 3 --json > $OUT/r/q35.json 2> $OUT/r/q35.log; pp $OUT/r/q35.json
timeout 60 python3 bench/cuda_prefill_profile.py .real/q35.gguf --tokens 512 --runs 3 --out $OUT/r 2>&1 | grep -v -i warn | head -20
tar czf $OUT/s17a.tgz -C $OUT r && rm -rf $OUT/r
