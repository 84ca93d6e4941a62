# Session 7, call 6: the matvec's shadow with its scale and activation loads added (bench/cuda_read_pattern.py);
# the final CUDA bench of Qwen3-8B Q4_K_M (pp512, tg128, depths 4096 and 16384) and its step profile.
. bench/gpu_env.sh
mkdir -p .real
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &
timeout 200 python3 bench/cuda_read_pattern.py --out $OUT > $OUT/read-pattern.log 2>&1; head -18 $OUT/read-pattern.log
wait
timeout 200 sh -c "$Z bench -m .real/q8b.gguf --backend cuda -p 512 -n 128 -d 0,4096,16384 -r 2 --json" > $OUT/bench-cuda.json 2> $OUT/bench-cuda.log; grep -v running $OUT/bench-cuda.log | grep "run 2\|verified\|rror"
timeout 40 python3 bench/cuda_step_profile.py .real/q8b.gguf --out $OUT 2>&1 | sed -n 1,10p
