# Session 3, call A: GPU tests, every synthetic model made (background), the Qwen3-8B bench and step profiles.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
Z="python3 -c 'import sys; from zinc.cli import main; sys.exit(main(sys.argv[1:]))'"
mkdir -p .real /tmp/g; cp .real/part* /tmp/g/ 2>/dev/null
[ -f .real/q8b.gguf ] || python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/synth.log 2>&1
python3 -m zinc.synth qwen35-35b-a3b -o .real/q35moe.gguf --ftype Q4_K_M -q >> $OUT/synth.log 2>&1 &
python3 -m zinc.synth gemma4-31b -o .real/g4-31b.gguf --ftype Q4_K_M -q >> $OUT/synth.log 2>&1 &
python3 -m zinc.synth gpt-oss-20b -o .real/goss.gguf --ftype MXFP4_MOE -q >> $OUT/synth.log 2>&1 &
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_flash.py tests/backends/test_cuda_graph.py tests/backends/test_cuda_kernels.py tests/backends/test_cuda_mmvq.py tests/backends/test_cuda_moe_mmvq.py 2>&1 | tail -4
wait; ls -la .real
timeout 150 sh -c "$Z bench -m .real/q8b.gguf --backend cuda -p 512,2048 -n 128 --json" > $OUT/bench-cuda.json 2> $OUT/bench-cuda.log; tail -7 $OUT/bench-cuda.log
timeout 150 sh -c "$Z bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 4096,16384 -r 2 --json" > $OUT/bench-cuda-depth.json 2> $OUT/bench-cuda-depth.log; tail -4 $OUT/bench-cuda-depth.log
timeout 60 python3 bench/cuda_step_profile.py .real/q8b.gguf --out $OUT 2>&1 | head -24
timeout 60 python3 bench/cuda_step_profile.py .real/q8b.gguf --depth 16384 --out $OUT 2>&1 | head -12

