# Session 12, call 1: the next q8_0 decode split kernel prototype (per-block K dots, V by dim) against the backend's
# f16 / q8_0 split kernels, 36 layers of distinct caches in a graph, over a configuration grid.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
timeout 500 python3 bench/cuda_kvq8_next.py --out $OUT 2>&1 | grep -v Warn | tee $OUT/kvq8-next.log | tail -70
