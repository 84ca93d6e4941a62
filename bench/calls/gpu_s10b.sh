# Session 10, call 2: the shared expert folded into the routed stacks (models.base.fold_shared_experts): the MoE,
# router and family tests on the GPU, then Qwen3.5-35B-A3B Q4_K_M tg128 in fresh processes, folded against
# unfolded (--no-fold), interleaved; then the folded step profile.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/w
[ -f .real/q35.gguf ] || (python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &)
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/models/test_fold_shared_expert.py tests/backends/test_cuda_recurrent.py \
  tests/backends/test_cuda_moe_mmvq.py tests/backends/test_cuda_experts_glu.py "tests/backends/test_cuda_ops_more.py::test_tiny_family" > $OUT/w/tests.log 2>&1; tail -3 $OUT/w/tests.log
while [ ! -f .real/q35.gguf ] || pgrep -f zinc.synth > /dev/null; do sleep 2; done
C="python3 bench/cuda_cfg_bench.py -"
for i in 1 2; do for v in fold no-fold; do
  f=$([ $v = no-fold ] && echo --no-fold)
  timeout 100 $C $f bench -m .real/q35.gguf --backend cuda -p 0 -n 128 -r 2 --json > $OUT/w/tg-$v-$i.json 2> $OUT/w/tg-$v-$i.log
  python3 -c "import json; t=json.load(open('$OUT/w/tg-$v-$i.json'))['tests'][0]; print('$v', t['name'], round(t['tok_s'], 1))" || tail -3 $OUT/w/tg-$v-$i.log
done; done
timeout 100 python3 bench/cuda_step_profile.py .real/q35.gguf --out $OUT/w 2>&1 | grep -v Warn | sed -n 1,22p
tar czf $OUT/w.tgz -C $OUT w
