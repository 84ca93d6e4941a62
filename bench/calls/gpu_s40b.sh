# Session 40, call b (any card): matmuls of 16, 64 and 128 rows at Qwen3-8B Q4_K_M's shapes: the tile GEMM over a
# configuration grid against dequantize + cuBLAS and a cuBLAS GEMM on a float16 copy (bench/cuda_tiles_gemm_bench.py).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
date
timeout 500 python3 bench/cuda_tiles_gemm_bench.py --out $OUT/r --rows 16,64,128 2>&1 | tail -30
date
