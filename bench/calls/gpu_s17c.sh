# Session 17: split parts as views (conv1d, gated norm and chunk_prep read them in place), relaxed atomics in
# align_kernel, cuBLAS writing f32 itself (torch.mm out_dtype). GPU tests, every family at four file types (with
# the positions where argmax differs), Qwen3.5 bench new vs HEAD (oldsrc/, untracked), prompt profile.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
(python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
python3 -c "import torch; print(torch.__version__)"
timeout 190 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_recurrent.py tests/backends/test_cuda_dense.py tests/backends/test_cuda_experts_gemm.py tests/backends/test_cuda_ops_more.py -m "slow or not slow" -rf --tb=short 2>&1 | tail -6
timeout 150 python3 -m zinc.backends.cuda.check_families --out $OUT/r --ftypes F16,Q8_0,Q4_K_M,Q6_K 2>&1 | grep -v Warn | tail -48
pp() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], d['verify'].get('ok'), [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $1; }
while pgrep -f zinc.synth > /dev/null; do sleep 2; done
timeout 100 python3 -m zinc.cli bench -m .real/q35.gguf --backend cuda -p 512,2048 -n 128 -r 5 --json > $OUT/r/q35.json 2> $OUT/r/q35.log; pp $OUT/r/q35.json
PYTHONPATH=$PWD/oldsrc/src timeout 80 python3 -m zinc.cli bench -m .real/q35.gguf --backend cuda -p 512,2048 -n 0 -r 5 --json > $OUT/r/q35-old.json 2> $OUT/r/q35-old.log; pp $OUT/r/q35-old.json
timeout 60 python3 bench/cuda_prefill_profile.py .real/q35.gguf --tokens 512 --runs 3 --out $OUT/r 2>&1 | grep -v -i warn | head -24
tar czf $OUT/s17c.tgz -C $OUT r && rm -rf $OUT/r
