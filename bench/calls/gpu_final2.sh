export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
Z="python3 -c 'import sys; from zinc.cli import main; sys.exit(main(sys.argv[1:]))'"
python3 -m zinc.synth qwen3-8b -o /tmp/q8b.gguf --ftype Q4_K_M -q > $OUT/synth.log 2>&1 &
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_graph.py 2>&1 | tail -2
wait
timeout 100 sh -c "$Z bench -m /tmp/q8b.gguf --backend cuda -p 512,2048 -n 128 --json" > $OUT/bench-cuda.json 2> $OUT/bench-cuda.log; tail -9 $OUT/bench-cuda.log
timeout 100 sh -c "$Z bench -m /tmp/q8b.gguf --backend cuda -p 0 -n 128 -d 4096,16384 -r 2 --json" > $OUT/bench-cuda-depth.json 2> $OUT/bench-cuda-depth.log; tail -6 $OUT/bench-cuda-depth.log
sed -n '/^timeout 90 python3 - <<.PY./,/^PY$/p' bench/gpu_final.sh | sed '1d;$d' > /tmp/ph.py; timeout 60 python3 /tmp/ph.py > $OUT/prefill-host.log 2>&1; head -40 $OUT/prefill-host.log
