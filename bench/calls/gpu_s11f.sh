# Session 11, call 6 (final code): GPU tests of q8_0 cells, flash, rope, graphs and the kernels; the flash q8_0 width
# probe; the tiny families on q8_0 cells (prefill through flash, decode through the split kernel).
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/backends/test_kv_q8.py tests/backends/test_cuda_flash.py \
  tests/backends/test_cuda_rope.py tests/backends/test_cuda_graph.py tests/backends/test_cuda_kernels.py -rf --tb=line 2>&1 | tail -3
timeout 60 python3 bench/cuda_flash_q8_probe.py 2>&1 | tail -1
timeout 80 python3 -m zinc.backends.cuda.check_families --out $OUT --kv-type q8_0 \
  --families qwen3-tiny,llama3-tiny,gemma3-tiny,gpt-oss-tiny --ftypes Q8_0 2>&1 | grep -v Warn | tail -5
