# Session 20: the attention combine kernel 32 output dims a program (grid T * Hq x DV / 32) instead of one head: GPU kernel
# tests, then against HEAD (oldsrc/, a copy) in fresh processes: tg128 on a short cache (cuda_tree_ab) and
# zinc bench tg128 at depth 16384.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
pp() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], d['verify'].get('ok'), [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $1 || tail -3 ${1%.json}.log; }
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_kernels.py tests/backends/test_cuda_graph.py tests/backends/test_kv_q8.py tests/backends/test_cuda_gptoss.py 2>&1 | tail -2
wait
for i in 1 2; do
  PYTHONPATH=$PWD/oldsrc/src timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --label head$i --out $OUT/r/ab 2>>$OUT/r/err.log
  timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --label dc$i --out $OUT/r/ab 2>>$OUT/r/err.log
done
rm -f $OUT/r/ab/*.npz
PYTHONPATH=$PWD/oldsrc/src timeout 120 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 16384 -r 3 --json > $OUT/r/head-deep.json 2> $OUT/r/head-deep.log; pp $OUT/r/head-deep.json
timeout 120 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 16384 -r 3 --json > $OUT/r/dc-deep.json 2> $OUT/r/dc-deep.log; pp $OUT/r/dc-deep.json
grep -v -i warn $OUT/r/err.log | tail -3
tar czf $OUT/s20g.tgz -C $OUT r && rm -rf $OUT/r
