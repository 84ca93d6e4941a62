# Session 10, call 5: Qwen3.5-35B-A3B Q4_K_M pp512 in fresh processes, shared expert folded against unfolded
# (--no-fold), interleaved: what the fold costs a prompt (its shared expert runs as 512 more (token, expert) pairs).
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/w
[ -f .real/q35.gguf ] || python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > /dev/null 2>&1
C="python3 bench/cuda_cfg_bench.py -"
for i in 1 2; do for v in fold no-fold; do
  f=$([ $v = no-fold ] && echo --no-fold)
  timeout 100 $C $f bench -m .real/q35.gguf --backend cuda -p 512 -n 0 -r 3 --json > $OUT/w/pp-$v-$i.json 2> $OUT/w/pp-$v-$i.log
  python3 -c "import json; t=json.load(open('$OUT/w/pp-$v-$i.json'))['tests'][0]; print('$v', t['name'], round(t['tok_s'], 1), round(t['tok_s_sd'], 1))" || tail -3 $OUT/w/pp-$v-$i.log
done; done
tar czf $OUT/w.tgz -C $OUT w
