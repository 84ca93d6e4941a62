# Session 28, call a: the decode attention's split loop turned around (S^T = K Q^T, O^T = V^T P^T) so the cells'
# TMA tiles feed Hopper's warp-group MMAs from shared memory (bench/cuda_attn_swab.py), against the backend's split
# kernel at 16,512, 4,224 and 128 cells, with a TMA loads-only shadow at depth.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -c "import triton, torch; print(triton.__version__, torch.__version__)"
timeout 420 python3 bench/cuda_attn_swab.py --out $OUT/r 2>&1 | grep -v Warning | tail -60
