# Session 7, call 10 (carry .gl, .snap): Qwen3.5-35B-A3B pp512 in fresh processes, interleaved: HEAD against the
# session-start code (ce1000b): the final bench gave 2,298 against 2,972-3,044 earlier.
. bench/gpu_env.sh
mkdir -p .real
[ -f .real/q35.gguf ] || python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > /dev/null 2>&1
for i in 1 2; do for v in HEAD ce1000b; do
  P=$PWD/src; [ $v != HEAD ] && P=$PWD/.snap/$v/src
  PYTHONPATH=$P timeout 70 sh -c "$Z bench -m .real/q35.gguf --backend cuda -p 512 -n 0 -r 2 --json" > $OUT/pp-$v-$i.json 2> /dev/null
  python3 -c "import json,sys; t=json.load(open('$OUT/pp-$v-$i.json'))['tests'][0]; print('$v', t['name'], round(t['tok_s'],1), [round(s,4) for s in t.get('samples_s',[])])" || echo "$v $i failed"
done; done
