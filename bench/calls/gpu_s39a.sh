# Session 39, call a (any card): zinc bench of the synthetic Qwen3-8B Q4_K_M: tg128 and tg128 of 8, 32 and 64
# sequences decoding together (after 128 prompt tokens each, as llama-batched-bench's anchor: 4,289 tok/s at 64;
# verified first against each sequence alone); the GPU tests of batched decode (the multi-sequence attention
# kernels, the tile GEMM of 5-128 rows, group steps captured and replayed against the NumPy backend); prompts of
# 16-128 tokens with the tile GEMM and without it (GEMM_TILES_MAX_ROWS=4: dequantize + cuBLAS as before).
. bench/calls/ab_env.sh
date
zb s39_par -p 0 -n 128 --parallel 8,32,64
tail -4 $OUT/r/s39_par.log
timeout 240 python3 -m pytest -q -x -p no:cacheprovider tests/backends/test_cuda_seqs.py tests/backends/test_cuda_graph.py \
  tests/backends/test_cuda_kernels.py -k "seqs or forward_seqs or tiles_gemm" 2>&1 | tail -8
date
zbt() { local n=$1 rows=$2; shift 2; timeout 100 python3 -c "import sys, zinc.backends.cuda.ops as o; o.GEMM_TILES_MAX_ROWS=$rows
from zinc.cli import main; sys.exit(main(sys.argv[1:]))" bench -m .real/q8b.gguf --backend cuda "$@" -r 3 --json \
  > $OUT/r/$n.json 2> $OUT/r/$n.log; pp $OUT/r/$n.json; }
zbt s39_pp_tiles 128 -p 16,64,128 -n 0
zbt s39_pp_cublas 4 -p 16,64,128 -n 0
date
