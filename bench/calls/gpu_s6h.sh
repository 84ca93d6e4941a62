# Session 6, call 9 (carry .gl, .snap): Vulkan pp512 A/B in fresh processes, interleaved: HEAD, the session-start
# code (.snap/05cd6c3), the XS commit (.snap/704094e); and the failing test_vulkan_mvq_xs case's details.
. bench/gpu_env.sh
mkdir -p .real
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/backends/test_vulkan_mvq_xs.py 2>&1 | grep -E "^E  |passed|failed" | cut -c1-600 | head -8
wait
for i in 1 2; do for v in HEAD 05cd6c3 704094e; do
  P=$PWD/src; [ $v != HEAD ] && P=$PWD/.snap/$v/src
  PYTHONPATH=$P timeout 80 sh -c "$Z bench -m .real/q8b.gguf --backend vulkan -p 512 -n 0 -r 2 --json" > $OUT/pp-$v-$i.json 2> /dev/null
  python3 -c "import json,sys; t=json.load(open('$OUT/pp-$v-$i.json'))['tests'][0]; print('$v', round(t['tok_s'],1), [round(s,3) for s in t['samples_s']])"
done; done
