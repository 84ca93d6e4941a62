# Ran with bench/wip/chain.patch applied (since reverted; it holds bench/cuda_chain.py and the GPU test of the chain).
# Session 24 (third call): bench/cuda_chain.py again, each chained form alone (the norms' chains, the GLU output's
# quantize chain) and each form's first layer checked against the separate launches.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 300 python3 bench/cuda_chain.py --out $OUT/r 2>&1 | grep -v -i warn
