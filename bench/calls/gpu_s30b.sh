# Session 30, call b: the stream form's loads-only shadow, cell-major against head-major cells, and a contiguous read.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 300 python3 bench/cuda_attn_stream.py --loads --out $OUT/r 2>&1 | grep -v Warning | tail -30
