# Session 10, call 3: two weights of one input in one launch (CudaOps.matmuls -> mmvq.matvec_pair: Q+K beside a Q6_K
# V, a Gated DeltaNet's Q6_K qkv beside its Q4_K gate stack): the mmvq tests and tiny families on the GPU, then tg128
# in fresh processes, paired against one launch per weight (--no-pair), Qwen3-8B and Qwen3.5-35B-A3B, interleaved.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/w
[ -f .real/q35.gguf ] || (python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &)
[ -f .real/q8b.gguf ] || (python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &)
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_mmvq.py "tests/backends/test_cuda_ops_more.py::test_tiny_family" > $OUT/w/tests.log 2>&1; tail -2 $OUT/w/tests.log
while [ ! -f .real/q35.gguf ] || [ ! -f .real/q8b.gguf ] || pgrep -f zinc.synth > /dev/null; do sleep 2; done
C="python3 bench/cuda_cfg_bench.py -"
for i in 1 2; do for m in q8b q35; do for v in pair no-pair; do
  f=$([ $v = no-pair ] && echo --no-pair)
  timeout 100 $C $f bench -m .real/$m.gguf --backend cuda -p 0 -n 128 -r 2 --json > $OUT/w/tg-$m-$v-$i.json 2> $OUT/w/tg-$m-$v-$i.log
  python3 -c "import json; t=json.load(open('$OUT/w/tg-$m-$v-$i.json'))['tests'][0]; print('$m $v', t['name'], round(t['tok_s'], 1))" || tail -3 $OUT/w/tg-$m-$v-$i.log
done; done; done
tar czf $OUT/w.tgz -C $OUT w
