# Session 30, call a: the split kernel shaped like a plain stream (bench/cuda_attn_stream.py: many small programs,
# K and V rows read straight into registers, per-slot online softmax, no shared memory) against the backend's split
# kernel at 16,512, 4,224 and 128 cells, with a loads-only shadow of the stream form.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 420 python3 bench/cuda_attn_stream.py --out $OUT/r 2>&1 | grep -v Warning | tail -40
