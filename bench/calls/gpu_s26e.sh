# Session 26, call e (an H200 came): settings tuned on H100s in sessions 24-25, A/B on the H200 (tg128 on a 128-cell
# cache, fresh processes), and the deep row of 16 splits of 128 cells against 32 of 64 once more; first the GPU tests
# of the graph, ops and attention-through-ops files (the decode attention on one f16 operand each).
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
[ -f .real/q8b.gguf ] || python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1 &
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_graph.py tests/backends/test_cuda_ops_more.py tests/backends/test_cuda_kernels.py -k "graph or ops_more or test_attention" 2>&1 | tail -4
wait
ab() { timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log | cut -c1-60; }
ab --label t1
ab --label norm22 --set mmvq.NORM_BLOCKS=2 --set mmvq.NORM_WARPS=2
ab --label s2b64 --set "ATTN_SPLITS=[(256,2,64),(2048,8,64),(8192,16,128),(4611686018427387904,32,64)]"
ab --label s8b16 --set "ATTN_SPLITS=[(256,8,16),(2048,8,64),(8192,16,128),(4611686018427387904,32,64)]"
ab --label apdl0 --set "ATTN_PDL=((0,0),(0,0))"
ab --label qx1 --set mmvq.QX_BLOCKS=1
ab --label t2
ab --label d1 --depth 16384
ab --label d16b128 --depth 16384 --set "ATTN_SPLITS=[(256,4,32),(2048,8,64),(8192,16,128),(4611686018427387904,16,128)]"
rm -f $OUT/r/ab/*.npz
