# Session 6, call 2: programmatic dependent launch (CUDA): GPU tests (graphs incl. PDL vs plain, mmvq,
# recurrent, MoE), Qwen3-8B bench with PDL on (depths 0, 16384) and off (depth 0), step profile.
. bench/gpu_env.sh
mkdir -p .real
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &
timeout 240 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_graph.py tests/backends/test_cuda_mmvq.py tests/backends/test_cuda_recurrent.py tests/backends/test_cuda_experts_glu.py tests/backends/test_cuda_moe_mmvq.py tests/backends/test_cuda_dense.py tests/backends/test_cuda_kernels.py -x 2>&1 | tail -4
wait
ZOFF="python3 -c 'import sys; import zinc.backends.cuda.kernels as k; k.PDL = False; from zinc.cli import main; sys.exit(main(sys.argv[1:]))'"
timeout 100 sh -c "$ZOFF bench -m .real/q8b.gguf --backend cuda -p 512 -n 128 -r 2 --json" > $OUT/bench-cuda-nopdl.json 2> $OUT/bench-cuda-nopdl.log; grep -v running $OUT/bench-cuda-nopdl.log | grep "run 2\|rror"
timeout 150 sh -c "$Z bench -m .real/q8b.gguf --backend cuda -p 512 -n 128 -d 0,16384 -r 2 --json" > $OUT/bench-cuda.json 2> $OUT/bench-cuda.log; grep -v running $OUT/bench-cuda.log | grep "run 2\|verified\|rror"
timeout 60 python3 bench/cuda_step_profile.py .real/q8b.gguf --out $OUT 2>&1 | sed -n 1,9p
