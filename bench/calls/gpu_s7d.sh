# Session 7, call 5 (trial, reverted: every V 2 configuration slower; V 2 no longer exists in mmvq.py): Q4_K matvec with its next step's weights loaded before this step's math (V 2), against
# the current configurations, every Qwen3-8B Q4_K shape; the matvec tests on the GPU.
. bench/gpu_env.sh
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_mmvq.py -x 2>&1 | tail -1
V="2,8,1,1,3,2;1,16,1,1,3,2;2,16,1,1,3,2;1,8,1,1,3,2;2,4,1,1,3,2;4,8,1,1,3,2;1,32,1,1,3,2;2,8,2,1,3,2;4,4,1,1,3,2;2,8,1,1,3,1,2;1,16,1,1,3,1"
timeout 400 python3 bench/cuda_mmvq_sweep.py --out $OUT --shapes Q4_K:4096x12288,Q4_K:4096x4096,Q4_K:6144x4096,Q4_K:12288x4096:glu,Q4_K:1024x4096 --variants "$V" 2>&1 | tail -10
