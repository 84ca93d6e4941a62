# Session 3, call B: the decode attention and MoE matvec sweeps (part1 of the Gemma file rides along).
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
cp .real/part* /tmp/g/ 2>/dev/null
timeout 260 python3 bench/cuda_attn_sweep.py --shapes qwen3-8b --budget 200 2>&1 | tail -30
timeout 200 python3 bench/cuda_moe_sweep.py 2>&1 | tail -25
