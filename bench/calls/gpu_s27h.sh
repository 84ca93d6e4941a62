# Session 27, call h: the split kernel at 16,512 cells without the cp.async pipeline (1 stage: plain loads, so small
# programs can stack several to a multiprocessor, as the plain stream that reaches 2.9 TB/s does) and at 2 stages,
# against the backend's row (bench/cuda_attn_layout.py --sweep: the kernel and its loads-only shadow).
export PYTHONPATH=$PWD/src
mkdir -p $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 250 python3 bench/cuda_attn_layout.py --sweep --out $OUT/r --cfgs "[(16,128,3,4),(32,64,1,4),(64,64,1,4),(64,32,1,4),(128,32,1,4),(32,128,1,4),(16,128,1,8),(128,64,1,4),(32,64,2,4),(64,64,2,4)]" 2>&1 | tail -20
