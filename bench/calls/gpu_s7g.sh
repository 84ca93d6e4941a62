# Session 7, call 8 (carry .gl, .snap): the two-remembered-quantized-inputs change again (session 6's trial),
# with every CUDA test on the GPU (no -x: every failure named); Qwen3.5-35B-A3B decode A/B against 5af5385.
. bench/gpu_env.sh
mkdir -p .real
python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &
timeout 280 python3 -m pytest -q -p no:cacheprovider tests/backends/ -k cuda 2>&1 | grep -E "^(FAILED|ERROR)|passed|failed" | head -20
wait
for v in HEAD 5af5385; do
  P=$PWD/src; [ $v != HEAD ] && P=$PWD/.snap/$v/src
  PYTHONPATH=$P timeout 130 sh -c "$Z bench -m .real/q35.gguf --backend cuda -p 0 -n 128 -r 2 --json" > $OUT/q35-$v.json 2> $OUT/q35-$v.log
  python3 -c "import json,sys; d=json.load(open('$OUT/q35-$v.json')); t=d['tests'][0]; print('$v', t['name'], round(t['tok_s'],1), d['verify'])" || tail -3 $OUT/q35-$v.log
done
