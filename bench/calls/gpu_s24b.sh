# Ran with bench/wip/chain.patch applied (since reverted; it holds bench/cuda_chain.py and the GPU test of the chain).
# Session 24 (second call): a decode layer's quantize launches folded into the matvec after them (mmvq.chain: the
# producer programs first in the grid, the matvec programs waiting on flags after their first weight loads). GPU
# tests of the matvec files (the chain's waits, bit-equality with the separate launches); bench/cuda_chain.py
# (36 Qwen3-8B layers: 6 launches a layer against 3).
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 240 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_mmvq.py tests/backends/test_cuda_moe_mmvq.py 2>&1 | tail -4
timeout 200 python3 bench/cuda_chain.py --out $OUT/r 2>&1 | grep -v -i warn
