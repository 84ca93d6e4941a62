# Session 10, call 6: the final code on the GPU: the shared expert folded for decode steps only (prompts keep its
# own weights), two weights in one launch, a GLU of four rows a program (mmvs R = 4): the mmvq, experts and
# tiny-family tests; Qwen3.5-35B-A3B Q4_K_M pp512 + tg128; Qwen3-8B tg128 in fresh processes with the GLU at
# four rows a program (a one-entry configuration file for cuda_cfg_bench) against the default two.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
Z="python3 -c 'import sys; from zinc.cli import main; sys.exit(main(sys.argv[1:]))'"
mkdir -p .real $OUT/w
[ -f .real/q35.gguf ] || (python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &)
[ -f .real/q8b.gguf ] || (python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &)
timeout 130 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_mmvq.py tests/backends/test_cuda_experts_glu.py \
  "tests/backends/test_cuda_ops_more.py::test_tiny_family" -k "row_streams or pair or glu or family" > $OUT/w/tests.log 2>&1; tail -2 $OUT/w/tests.log
while [ ! -f .real/q35.gguf ] || [ ! -f .real/q8b.gguf ] || pgrep -f zinc.synth > /dev/null; do sleep 2; done
timeout 80 sh -c "$Z bench -m .real/q35.gguf --backend cuda -p 512 -n 128 -r 2 --json" > $OUT/bench-q35.json 2> $OUT/w/bench-q35.log; grep -v running $OUT/w/bench-q35.log | grep "run 2\|rror"
echo '{"results": [{"type": "Q4_K", "N": 12288, "K": 4096, "glu": true, "cfg": [4, 1, 1, 1, 1, 2, 1], "us": 0, "rel_err": 0}]}' > $OUT/w/glu4.json
for i in 1 2; do for v in glu4 default; do
  c=$([ $v = glu4 ] && echo $OUT/w/glu4.json || echo -)
  timeout 45 python3 bench/cuda_cfg_bench.py $c bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -r 2 --json > $OUT/w/tg-$v-$i.json 2> $OUT/w/tg-$v-$i.log
  python3 -c "import json; t=json.load(open('$OUT/w/tg-$v-$i.json'))['tests'][0]; print('$v', t['name'], round(t['tok_s'], 1))" || tail -2 $OUT/w/tg-$v-$i.log
done; done
tar czf $OUT/w.tgz -C $OUT w
