# Session 11, call 2: the q8_0 split kernel with whole-vector loads (kvq8.load_rows / load_cols): its GPU tests,
# gemma4-tiny's graph capture on f16 and q8_0 cells, a sweep of split configurations against the f16 kernel,
# and Qwen3-8B tg128 at depth 0 / 16384 on q8_0 cells.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real
[ -f .real/q8b.gguf ] || (python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &)
timeout 100 python3 -m pytest -q -x -p no:cacheprovider tests/backends/test_kv_q8.py tests/backends/test_cuda_flash.py \
  tests/backends/test_cuda_graph.py -k "q8 or prefill" 2>&1 | tail -2
for kv in f16 q8_0; do
  timeout 45 python3 -m zinc.backends.cuda.check_families --out $OUT/$kv --kv-type $kv --families gemma4-tiny \
    --ftypes Q4_K_M 2>&1 | grep -v Warn | tail -2
done
timeout 240 python3 bench/cuda_kvq8_sweep.py --out $OUT 2>&1 | grep -v Warn | tail -8
while [ ! -f .real/q8b.gguf ] || pgrep -f zinc.synth > /dev/null; do sleep 2; done
timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 0,16384 -r 2 --kv-type q8_0 --json \
  > $OUT/bench-q8_0.json 2> $OUT/bench-q8_0.log
python3 -c "import json;r=json.load(open('$OUT/bench-q8_0.json'));print([(t['name'],round(t['tok_s'],1),round(t['tok_s_sd'],1)) for t in r['tests']])" || tail -3 $OUT/bench-q8_0.log
