# Session 18: the rope kernels' cos / sin without libdevice (no local memory): six decode graphs (is the 4th still
# slower?), the kernels' registers / spills, the rope and graph tests on the GPU.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_rope.py tests/backends/test_cuda_kernels.py -k "rope or cos_sin or attention" 2>&1 | tail -2
wait
timeout 150 python3 bench/cuda_graph_count.py --graphs 0 --model .real/q8b.gguf --out $OUT/r/m 2>&1 | grep -v -i warn | grep -v "^zinc" | grep -v "return \[o" | tail -13
tar czf $OUT/s18g.tgz -C $OUT r && rm -rf $OUT/r
