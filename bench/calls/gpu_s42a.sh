# Session 42, call a (any card): the GPU tests of sessions 39-41, each file its own pytest (an abort loses one
# file), failures shown; then the tile GEMM over its configuration grid at 64 rows (a 64-sequence decode step) for
# Qwen3-8B Q4_K_M's shapes but the lm_head (bench/cuda_tiles_gemm_bench.py).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
date
for f in test_cuda_seqs test_cuda_graph test_cuda_kernels test_cuda_recurrent; do
  timeout 120 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE tests/backends/$f.py \
    -k "seqs or tiles_gemm or top_logits or sample or follow or graphs or graph_replay" > $OUT/r/t_$f.log 2>&1
  echo "== $f rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed|Fatal|^E  " $OUT/r/t_$f.log | head -30 | cut -c1-300
done
date
GRID='32,4,3,0,1;64,4,3,0,1;128,4,3,0,1;32,8,3,0,1;64,8,3,0,1;128,8,3,0,1;32,4,3,1,1;64,4,3,1,1;16,4,3,0,1;32,4,4,0,1;64,4,4,0,1;32,4,3,0,2;32,4,3,0,4;64,4,3,0,2;64,4,3,0,4;64,4,3,0,8;32,4,3,0,8;16,4,3,0,4;64,8,3,0,4;128,8,3,0,4'
timeout 300 python3 bench/cuda_tiles_gemm_bench.py --out $OUT/r --rows 64 --shapes 0,1,2,3,4,5 --configs "$GRID" 2>&1 | tail -30
date
