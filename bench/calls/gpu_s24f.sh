# Session 24 (sixth call): programmatic dependent launch in the captured decode step (ops.PDL: the quantize, streams
# matvec and decode attention kernels each let the next launch at its start and wait for the one before). GPU tests
# of the graph, matvec, attention and rope files; tg128 and tg128@16384 of the session-start tree (.ab/old/src)
# against this one, and this one with PDL off; fresh processes.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 170 python3 -m pytest -q -p no:cacheprovider -x tests/backends/test_cuda_graph.py tests/backends/test_cuda_mmvq.py tests/backends/test_cuda_gptoss.py tests/backends/test_cuda_rope.py -k "not experts" 2>&1 | tail -3
wait
ab() { timeout 110 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log; }
PYTHONPATH=$PWD/.ab/old/src ab --label old1 --depth 16384
ab --label pdl1 --depth 16384
ab --label off1 --set PDL=False
python3 bench/cuda_tree_ab.py --compare $OUT/r/ab/tree-old1.npz $OUT/r/ab/tree-pdl1.npz
rm -f $OUT/r/ab/*.npz
tail -3 $OUT/r/err.log
