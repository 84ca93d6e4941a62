# Session 5, call 3 (carry .gl, .snap): the fused-attention tests that failed on the GPU (details), graph +
# slow family tests on the GPU, the fused attention check; Vulkan tests + Qwen3-8B bench at depths 0/4096;
# Qwen3.5 pp512 at three earlier commits (.snap/<commit>/src) and HEAD (prefill 3,044 -> 2,504?), HEAD tg128.
. bench/gpu_env.sh
mkdir -p .real
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1; python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > $OUT/synth35.log 2>&1) &
timeout 100 python3 -m pytest -q -x -p no:cacheprovider tests/backends/test_cuda_fused_attn.py 2>&1 | grep -v "^  " | tail -25
timeout 60 python3 bench/cuda_fused_attn_check.py 2>&1 | tail -8
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_graph.py tests/backends/test_cuda_ops_more.py -m "slow or not slow" -k "graph or tiny_family" 2>&1 | tail -4 &
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/backends/test_vulkan.py 2>&1 | tail -3
wait
while [ ! -f .real/q8b.gguf ]; do sleep 2; done; sleep 3
timeout 120 sh -c "$Z bench -m .real/q8b.gguf --backend vulkan -p 512 -n 128 -d 0,4096 -r 2 --json" > $OUT/bench-vulkan.json 2> $OUT/bench-vulkan.log; grep -v running $OUT/bench-vulkan.log | grep "run 2\|verified\|rror"
wait
for c in b6bbede 70dad6f a1e5b45; do echo "== $c"; PYTHONPATH=$PWD/.snap/$c/src timeout 60 python3 -c 'import sys; from zinc.cli import main; sys.exit(main(sys.argv[1:]))' bench -m .real/q35.gguf --backend cuda -p 512 -n 0 -r 2 2>&1 | grep "run 2\|rror"; done
echo "== HEAD"; timeout 120 sh -c "$Z bench -m .real/q35.gguf --backend cuda -p 512 -n 128 -r 2 --json" > $OUT/bench-q35.json 2> $OUT/bench-q35.log; grep -v running $OUT/bench-q35.log | grep "run 2\|rror"
