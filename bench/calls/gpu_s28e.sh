# Session 28, call e (for little device time): the TMA split loop against the plain one at 16,512 cells only, with
# and without the rope prologue, and the TMA loads-only shadow (bench/cuda_attn_swab.py --tiny).
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 110 python3 bench/cuda_attn_swab.py --tiny --out $OUT/r 2>&1 | grep -v Warning | tail -12
