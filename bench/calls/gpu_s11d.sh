# Session 11, call 4: the final q8_0 kernels (2D tiles, f16 products): GPU tests of q8_0 cells, flash, rope, graphs and
# the tiny families; Qwen3-8B Q4_K_M tg128 at depth 0 / 16384 on q8_0 cells and pp512; a depth-0 step profile on q8_0;
# Qwen3.5-35B-A3B pp512 with and without the shared expert folded (same machine).
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real
[ -f .real/q8b.gguf ] || (python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &)
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/backends/test_kv_q8.py tests/backends/test_cuda_flash.py \
  tests/backends/test_cuda_rope.py tests/backends/test_cuda_graph.py tests/backends/test_cuda_kernels.py -rf --tb=line 2>&1 | tail -6
timeout 60 python3 -m zinc.backends.cuda.check_families --out $OUT --kv-type q8_0 \
  --families qwen3-tiny,gemma3-tiny,gpt-oss-tiny --ftypes Q4_K_M 2>&1 | grep -v Warn | tail -4
while [ ! -f .real/q8b.gguf ] || pgrep -f zinc.synth > /dev/null; do sleep 2; done
(python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &)
timeout 170 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 512 -n 128 -d 0,16384 -r 2 --kv-type q8_0 --json \
  > $OUT/bench-q8_0.json 2> $OUT/bench-q8_0.log
python3 -c "import json;r=json.load(open('$OUT/bench-q8_0.json'));print([(t['name'],round(t['tok_s'],1),round(t['tok_s_sd'],1)) for t in r['tests']])" || tail -3 $OUT/bench-q8_0.log
timeout 60 python3 bench/cuda_step_profile.py .real/q8b.gguf --kv-type q8_0 --out $OUT 2>&1 | grep -v Warn | sed -n 1,8p
while [ ! -f .real/q35.gguf ] || pgrep -f zinc.synth > /dev/null; do sleep 2; done
for i in 1; do for f in "" "--no-fold"; do
  timeout 100 python3 bench/cuda_cfg_bench.py - $f bench -m .real/q35.gguf --backend cuda -p 512 -n 0 -r 3 --json \
    > $OUT/pp-q35$f-$i.json 2> /dev/null
  python3 -c "import json;r=json.load(open('$OUT/pp-q35$f-$i.json'));print('q35 pp512 fold${f:-on} $i',[(t['name'],round(t['tok_s'],1),round(t['tok_s_sd'],1)) for t in r['tests']])" || echo "q35 $f $i failed"
done; done
