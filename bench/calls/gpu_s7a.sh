# Session 7, call 1 (carry .gl, .snap): CUDA tests after the GLU matvec writes its 8-bit output and decode
# attention combines in its last split (two launches fewer per layer); decode A/B against ce1000b; bench; profile.
. bench/gpu_env.sh
mkdir -p .real
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &
timeout 280 python3 -m pytest -q -p no:cacheprovider tests/backends/ -k cuda -x 2>&1 | tail -3
wait
ab tg 2 "-m .real/q8b.gguf --backend cuda -p 0 -n 128 -r 2" HEAD ce1000b
timeout 150 sh -c "$Z bench -m .real/q8b.gguf --backend cuda -p 512 -n 128 -d 0,4096,16384 -r 2 --json" > $OUT/bench-cuda.json 2> $OUT/bench-cuda.log; grep -v running $OUT/bench-cuda.log | grep "run 2\|verified\|rror"
timeout 40 python3 bench/cuda_step_profile.py .real/q8b.gguf --out $OUT 2>&1 | sed -n 1,12p
