# Session 7, call 2: where the fixed costs are: an empty kernel in a graph, the norm+quantize and quantize
# launches per (blocks, warps); the matvecs with K split over 2-4 programs (atomics into a zeroed output,
# the memset timed with it) for the down, O and QKV shapes.
. bench/gpu_env.sh
timeout 150 python3 bench/cuda_quant_sweep.py --out $OUT 2>&1 | tail -60
V="2,8,1,1,3,1,2;1,8,1,2,3,1,2;2,8,1,2,3,1,2;2,8,1,4,3,1,2;1,16,1,2,3,1;1,16,1,4,3,1;2,16,1,2,3,1,2;1,16,1,2;1,16,1,4;2,16,1,3,3,1,2;4,8,1,2,3,1,2;1,8,1,4,3,1,2;1,8,1,3,3,1,2"
timeout 400 python3 bench/cuda_mmvq_sweep.py --out $OUT --shapes Q4_K:4096x12288,Q6_K:4096x12288,Q4_K:4096x4096,Q4_K:6144x4096 --variants "$V" 2>&1 | tail -14
