# Session 23 (first call): GPU tests of the attention (session 22's last change) and of the matvecs (mmvs now takes
# an rms scale); the residual + norm inside the matvec (bench/cuda_resnorm.py: checks, then producer/consumer chains
# against mmvs + norm_quantize); zinc bench of the session-22 tree on this GPU.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p $OUT/r .real
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 150 python3 -m pytest -q -p no:cacheprovider -x tests/backends/test_cuda_kernels.py tests/backends/test_cuda_rope.py tests/backends/test_kv_q8.py tests/backends/test_cuda_mmvq.py -k "attention or mmvq or mmvs or matvec or pair" 2>&1 | tail -3
timeout 200 python3 bench/cuda_resnorm.py --out $OUT/r 2>&1 | grep -v '"check"' | tail -30
wait
timeout 90 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 512 -n 128 -r 3 --json > $OUT/r/bench.json 2> $OUT/r/bench.log
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['verify'].get('ok'), [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $OUT/r/bench.json || tail -3 $OUT/r/bench.log
