# Session 9, call 3: V 2 as the default for Q4_K / Q6_K, and the L2 weight prefetch of captured decode steps
# (graph.WeightPrefetch; the tree of trial commit 6985db3, whose bench/cuda_cfg_bench.py took --prefetch): every CUDA test on the GPU, then tg128 in fresh processes with PREFETCH_BYTES 0 (off),
# 8, 16 (the default) and 32 MB, interleaved; results packed into one archive (the reply takes 8 files).
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/w
[ -f .real/q8b.gguf ] || (python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &)
timeout 280 python3 -m pytest -q -p no:cacheprovider tests/backends/ -k cuda > $OUT/w/tests.log 2>&1; tail -3 $OUT/w/tests.log
while [ ! -f .real/q8b.gguf ] || pgrep -f zinc.synth > /dev/null; do sleep 2; done
C="python3 bench/cuda_cfg_bench.py -"
for i in 1 2; do for p in 0 16777216 8388608 33554432; do
  timeout 100 $C --prefetch $p bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -r 2 --json > $OUT/w/tg-$p-$i.json 2> $OUT/w/tg-$p-$i.log
  python3 -c "import json; t=json.load(open('$OUT/w/tg-$p-$i.json'))['tests'][0]; print('prefetch $p', t['name'], round(t['tok_s'], 1))" || tail -3 $OUT/w/tg-$p-$i.log
done; done
tar czf $OUT/w.tgz -C $OUT w
