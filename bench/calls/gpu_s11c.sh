# Session 11, call 3: the q8_0 split kernel with whole-vector loads and int8 -> f16 without the conversion unit: its GPU tests,
# tiny families on q8_0 cells, a sweep of split configurations against the f16 kernel,
# and Qwen3-8B tg128 at depth 0 / 16384 on q8_0 cells.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real
[ -f .real/q8b.gguf ] || (python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &)
timeout 100 python3 -m pytest -q -x -p no:cacheprovider tests/backends/test_kv_q8.py tests/backends/test_cuda_flash.py \
  tests/backends/test_cuda_graph.py -k "q8 or prefill" -rf 2>&1 | tail -6
timeout 100 python3 -m zinc.backends.cuda.check_families --out $OUT --kv-type q8_0 \
  --families qwen3-tiny,gemma3-tiny,gpt-oss-tiny,gemma4-tiny --ftypes Q4_K_M 2>&1 | grep -v Warn | tail -6
timeout 240 python3 bench/cuda_kvq8_sweep.py --out $OUT 2>&1 | grep -v Warn | tail -8
while [ ! -f .real/q8b.gguf ] || pgrep -f zinc.synth > /dev/null; do sleep 2; done
timeout 170 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 0,16384 -r 2 --kv-type q8_0 --json \
  > $OUT/bench-q8_0.json 2> $OUT/bench-q8_0.log
python3 -c "import json;r=json.load(open('$OUT/bench-q8_0.json'));print([(t['name'],round(t['tok_s'],1),round(t['tok_s_sd'],1)) for t in r['tests']])" || tail -3 $OUT/bench-q8_0.log
