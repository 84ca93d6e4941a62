# Session 17, the landing state (split views, relaxed align atomics; Q8_0 decode on mmvq's 8-bit activations,
# q8_matvec only in exact mode): GPU tests, every family at F16 / Q8_0 / Q4_K_M, then the benches of record:
# Qwen3.5-35B-A3B -p 512,2048 -n 128; Qwen3-8B Q4_K_M -p 512,2048 -n 128 and -p 0 -n 128 -d 4096,16384.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
(python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1;
 python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q >> $OUT/r/synth.log 2>&1) &
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_recurrent.py tests/backends/test_cuda_ops_more.py tests/backends/test_cuda_kernels.py -m "slow or not slow" -rf --tb=short 2>&1 | tail -4
timeout 80 python3 -m zinc.backends.cuda.check_families --out $OUT/r --ftypes F16,Q8_0,Q4_K_M 2>&1 | grep -v Warn | grep -v " ok$" | tail -12
pp() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], d['verify'].get('ok'), [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $1; }
while pgrep -f zinc.synth > /dev/null; do sleep 2; done
timeout 90 python3 -m zinc.cli bench -m .real/q35.gguf --backend cuda -p 512,2048 -n 128 -r 5 --json > $OUT/r/q35.json 2> $OUT/r/q35.log; pp $OUT/r/q35.json
timeout 70 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 512,2048 -n 128 -r 5 --json > $OUT/r/q8b.json 2> $OUT/r/q8b.log; pp $OUT/r/q8b.json
timeout 90 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 4096,16384 -r 3 --json > $OUT/r/q8b-depth.json 2> $OUT/r/q8b-depth.log; pp $OUT/r/q8b-depth.json
tar czf $OUT/s17e.tgz -C $OUT r && rm -rf $OUT/r
