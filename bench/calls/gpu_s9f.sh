# Session 9, call 6: the rows-as-streams form for the selected experts of a MoE layer (mmvq.matvec_experts, V 2):
# the MoE tests on the GPU, the expert sweep at the Qwen3.5-35B-A3B shapes with NEW2, then Qwen3.5 tg128 in fresh
# processes with the session's expert configurations against the sweep's suggested ones.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real
[ -f .real/q35.gguf ] || (python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &)
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_moe_mmvq.py tests/backends/test_cuda_experts_glu.py 2>&1 | tail -2
timeout 240 python3 bench/cuda_moe_sweep.py --models qwen35moe --out $OUT > $OUT/moe-sweep.log 2>&1; grep -v "^ *$" $OUT/moe-sweep.log | grep "T1 \|EXPERT\|failed" | cut -c1-170
while [ ! -f .real/q35.gguf ] || pgrep -f zinc.synth > /dev/null; do sleep 2; done
for i in 1 2; do
  timeout 100 python3 bench/cuda_cfg_bench.py - bench -m .real/q35.gguf --backend cuda -p 0 -n 128 -r 2 --json > $OUT/tg-old-$i.json 2>/dev/null
  timeout 100 python3 bench/cuda_cfg_bench.py - --experts $OUT/cuda-moe-sweep.json bench -m .real/q35.gguf --backend cuda -p 0 -n 128 -r 2 --json > $OUT/tg-new-$i.json 2>$OUT/tg-new-$i.log
  for v in old new; do python3 -c "import json; t=json.load(open('$OUT/tg-$v-$i.json'))['tests'][0]; print('$v', t['name'], round(t['tok_s'], 1))" || echo "$v failed"; done
done
grep "expert configs" $OUT/tg-new-1.log | cut -c1-400
