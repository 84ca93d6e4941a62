# Session 30, call c: the chunk form (bench/cuda_attn_stream.py's chunk_kernel: a split program of a fixed, compile-time
# number of cells, unrolled, tensor-core products on tiles read straight into registers) against the backend's
# split kernel at 16,512, 4,224 and 128 cells; a few stream-form rows.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 420 python3 bench/cuda_attn_stream.py --out $OUT/r 2>&1 | grep -v Warning | tail -40
