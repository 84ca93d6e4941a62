# Session 7, call 3 (carry .gl, .snap): decode A/B of the quantize-launch configurations (bench/cuda_quant_sweep.py)
# against ce1000b; the matvecs with more weight bytes in flight per loop trip (U 3-8, more rows, 2 warps).
. bench/gpu_env.sh
mkdir -p .real
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &
V="2,8,1,1,3,1,2;2,8,1,1,3,1,4;2,8,1,1,3,1,3;2,4,1,1,3,1,4;2,4,1,1,3,1,8;4,4,1,1,3,1,4;4,8,1,1,3,1,2;2,8,2,1,3,1,2;4,8,2,1,3,1,2;2,16,2,1,3,1,2;1,8,1,1,3,1,8;4,4,1,1,3,1,8;1,16,1,1,3,1,4;2,16,1,1,3,1,4"
timeout 300 python3 bench/cuda_mmvq_sweep.py --out $OUT --shapes Q4_K:4096x12288,Q6_K:4096x12288,Q4_K:4096x4096,Q4_K:6144x4096 --variants "$V" 2>&1 | tail -9
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_mmvq.py -x 2>&1 | tail -1
wait
ab tg 2 "-m .real/q8b.gguf --backend cuda -p 0 -n 128 -r 2" HEAD ce1000b
