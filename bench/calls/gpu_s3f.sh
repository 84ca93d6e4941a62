# Session 3, final CUDA call: attention check at real head shapes, then the benches.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
Z="python3 -c 'import sys; from zinc.cli import main; sys.exit(main(sys.argv[1:]))'"
mkdir -p .real
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &
python3 -m zinc.synth gpt-oss-20b -o .real/goss.gguf --ftype MXFP4_MOE -q > /dev/null 2>&1 &
python3 -m zinc.synth qwen35-35b-a3b -o .real/q35moe.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &
timeout 100 python3 bench/cuda_attn_check.py 2>&1 | tail -24
wait
timeout 100 sh -c "$Z bench -m .real/q8b.gguf --backend cuda -p 512 -n 128 -r 2 --json" > $OUT/bench-cuda.json 2> $OUT/bench-cuda.log; tail -4 $OUT/bench-cuda.log
timeout 80 sh -c "$Z bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 16384 -r 1 --json" > $OUT/bench-cuda-depth.json 2> $OUT/bench-cuda-depth.log; tail -2 $OUT/bench-cuda-depth.log
for m in goss q35moe; do
  timeout 100 sh -c "$Z bench -m .real/$m.gguf --backend cuda -p 512 -n 128 -r 1 --json" > $OUT/bench-$m.json 2> $OUT/bench-$m.log; tail -4 $OUT/bench-$m.log
done
timeout 40 python3 bench/cuda_step_profile.py .real/q8b.gguf --out $OUT 2>&1 | head -9
