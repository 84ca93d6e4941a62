# Session 27, call b (after call a, if head-major cells won there): `zinc bench` JSON with KV_HEAD_MAJOR=True (pp512 +
# tg128, then tg128@16384 and tg128@4096), every family's tiny model at every file type against the NumPy backend
# with head-major cells, and the GPU tests of the cache kernels' files. Prepared in session 27, not yet run.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
HM="import sys, zinc.backends.cuda.ops as o; o.KV_HEAD_MAJOR = True"
pp() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], d['verify'].get('ok'), [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $1 || tail -3 ${1%.json}.log; }
[ -f .real/q8b.gguf ] || python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1 &
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 280 python3 -c "$HM; from zinc.backends.cuda.check_families import main; sys.exit(main(sys.argv[1:]))" --out $OUT/r > $OUT/r/families.log 2>&1; tail -3 $OUT/r/families.log
grep -v " ok$" $OUT/r/families.log | head -8
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_flash.py tests/backends/test_cuda_rope.py tests/backends/test_kv_q8.py 2>&1 | tail -3
wait
Z="$HM; from zinc.cli import main; sys.exit(main(sys.argv[1:]))"
timeout 150 python3 -c "$Z" bench -m .real/q8b.gguf --backend cuda -p 512 -n 128 -r 3 --json > $OUT/r/bench.json 2> $OUT/r/bench.log; pp $OUT/r/bench.json
timeout 150 python3 -c "$Z" bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 16384 -r 3 --json > $OUT/r/deep.json 2> $OUT/r/deep.log; pp $OUT/r/deep.json
timeout 100 python3 -c "$Z" bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 4096 -r 3 --json > $OUT/r/mid.json 2> $OUT/r/mid.log; pp $OUT/r/mid.json
