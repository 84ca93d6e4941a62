# Session 43, call d (~1.5 min): decode attention over a deep f16 cache with TMA tile copies (bench/cuda_attn_tma.py)
# against the backend's split kernel at its row for the card (H200 session 38: ~3.0 TB/s at depth 16384).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p $OUT/r
timeout 120 python3 bench/cuda_attn_tma.py --out $OUT/r 2>&1 | grep -v "^S " | cut -c1-220
