# Session 11, call 5: the prefill flash kernel reading q8_0 K as (D, cells) tiles: GPU tests of q8_0 cells, flash, graphs.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/backends/test_kv_q8.py tests/backends/test_cuda_flash.py \
  tests/backends/test_cuda_graph.py tests/backends/test_cuda_kernels.py -rf --tb=line 2>&1 | tail -4
timeout 60 python3 -m zinc.backends.cuda.check_families --out $OUT --kv-type q8_0 \
  --families qwen3-tiny,gemma3-tiny,gemma4-tiny --ftypes Q8_0 2>&1 | grep -v Warn | tail -4
