# Session 14, call 1: decode attention over cell-major vs head-major f16 caches (Qwen3-8B shape), splits x stages,
# and few splits at a small cache (the depth-0 bench's).
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
mkdir -p $OUT/big $OUT/small
timeout 330 python3 bench/cuda_attn_layout.py --out $OUT/big 2>&1 | grep -v Warn > $OUT/attn-layout.log; tail -12 $OUT/attn-layout.log
timeout 120 python3 bench/cuda_attn_layout.py --out $OUT/small --cells 640 --splits 1,2,4,8 2>&1 | grep -v Warn > $OUT/attn-small.log; tail -30 $OUT/attn-small.log
