# Session 9, call 5: final benches with the rows-as-streams matvecs: Qwen3-8B Q4_K_M (pp512, tg128, depths 4096 and
# 16384) and its step profile, Qwen3.5-35B-A3B Q4_K_M (tg128, pp512).
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
Z="python3 -c 'import sys; from zinc.cli import main; sys.exit(main(sys.argv[1:]))'"
mkdir -p .real
python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1
timeout 230 sh -c "$Z bench -m .real/q8b.gguf --backend cuda -p 512 -n 128 -d 0,4096,16384 -r 2 --json" > $OUT/bench-cuda.json 2> $OUT/bench-cuda.log; grep -v running $OUT/bench-cuda.log | grep "run 2\|verified\|rror"
timeout 60 python3 bench/cuda_step_profile.py .real/q8b.gguf --out $OUT 2>&1 | grep -v Warn | sed -n 1,8p
wait
timeout 200 sh -c "$Z bench -m .real/q35.gguf --backend cuda -p 512 -n 128 -r 2 --json" > $OUT/bench-q35.json 2> $OUT/bench-q35.log; grep -v running $OUT/bench-q35.log | grep "run 2\|verified\|rror"
