# Session 46, call c (any card, ~4 min): the selected experts' 8-bit matvecs at 64 tokens (512 pairs, Qwen3.5-35B-A3B's
# shapes) over a grid of configurations (bench/cuda_experts_many_bench.py): `mmvq.EXPERT_CONFIG` was measured at one
# and four tokens, and the session 43 H100 profile of the 64-sequence step gave these matvecs 12.4 of 23.2 ms.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 400 python3 bench/cuda_experts_many_bench.py --out $OUT/r 2>&1 | grep -v Warn
