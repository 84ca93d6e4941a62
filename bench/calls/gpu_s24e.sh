# Session 24 (fifth call): programmatic dependent launch on a decode layer's quantize and matvec launches
# (bench/cuda_pdl_layers.py: where the matvecs wait, when the kernels trigger the next launch; 36 Qwen3-8B layers).
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 300 python3 bench/cuda_pdl_layers.py --out $OUT/r 2>&1 | grep -v -i warn
