# Session 11, call 1: the q8_0 KV cache on the H200. GPU tests of the changed kernels (q8_0 cells, attention,
# flash, rope, graphs), the tiny families on q8_0 cells against the NumPy backend's, then Qwen3-8B Q4_K_M:
# tg128 at depth 0 / 16384 with f16 and q8_0 cells, and a step profile at depth 16384 on q8_0 cells.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real
[ -f .real/q8b.gguf ] || (python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &)
timeout 240 python3 -m pytest -q -x -p no:cacheprovider tests/backends/test_kv_q8.py tests/backends/test_cuda_flash.py \
  tests/backends/test_cuda_rope.py tests/backends/test_cuda_kernels.py tests/backends/test_cuda_graph.py \
  tests/backends/test_cuda_gptoss.py 2>&1 | tail -4
timeout 120 python3 -m zinc.backends.cuda.check_families --out $OUT --kv-type q8_0 \
  --families qwen3-tiny,gemma3-tiny,gpt-oss-tiny,qwen35-tiny,gemma4-tiny --ftypes Q4_K_M 2>&1 | grep -v Warn | tail -8
while [ ! -f .real/q8b.gguf ] || pgrep -f zinc.synth > /dev/null; do sleep 2; done
for kv in f16 q8_0; do
  timeout 170 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 0,16384 -r 2 --kv-type $kv --json \
    > $OUT/bench-$kv.json 2> $OUT/bench-$kv.log
  python3 -c "import json;r=json.load(open('$OUT/bench-$kv.json'));print('$kv',[(t['name'],round(t['tok_s'],1),round(t['tok_s_sd'],1)) for t in r['tests']])" || tail -3 $OUT/bench-$kv.log
done
timeout 80 python3 bench/cuda_step_profile.py .real/q8b.gguf --depth 16384 --kv-type q8_0 --out $OUT 2>&1 | grep -v Warn | sed -n 1,8p
