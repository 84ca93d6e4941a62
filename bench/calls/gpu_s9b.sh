# Session 9, call 2: the wider VAR2 sweep (R, units per thread, warps, unrolling), then tg128 in fresh processes with
# each shape's best configuration of the old forms (V <= 1: the session-start defaults are among them) against the
# best overall (V 2), twice interleaved; the step profile and tg128 @ 16384 with the best.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real
[ -f .real/q8b.gguf ] || (python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &)
timeout 300 python3 bench/cuda_mmvq_sweep.py --out $OUT --variants v2 > $OUT/sweep.log 2>&1
grep -v "^ *$" $OUT/sweep.log | tail -15 | cut -c1-150
while [ ! -f .real/q8b.gguf ] || pgrep -f zinc.synth > /dev/null; do sleep 2; done
C="python3 bench/cuda_cfg_bench.py $OUT/mmvq-sweep.json"
for i in 1 2; do for v in 1 2; do
  timeout 120 $C --max-v $v bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -r 2 --json > $OUT/tg-v$v-$i.json 2> $OUT/tg-v$v-$i.log
  python3 -c "import json; t=json.load(open('$OUT/tg-v$v-$i.json'))['tests'][0]; print('max-v $v', t['name'], round(t['tok_s'], 1))" || tail -3 $OUT/tg-v$v-$i.log
done; done
timeout 60 $C profile .real/q8b.gguf --out $OUT 2>&1 | grep -v "^config" | sed -n 1,9p
timeout 150 $C bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 16384 -r 2 --json > $OUT/tgd.json 2> $OUT/tgd.log
python3 -c "import json; t=json.load(open('$OUT/tgd.json'))['tests'][0]; print(t['name'], round(t['tok_s'], 1))" || tail -3 $OUT/tgd.log
