# Session 43, call f (any card, ~6 min): the GPU tests of the tile GEMM and the graphs of several sequences with the
# session-43 shapes; the tile GEMM's grid around them at 16 / 64 / 128 rows; Qwen3-8B's 64-sequence step profile.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /tmp/synth.log 2>&1 &
date
for f in test_cuda_seqs test_cuda_kernels; do
  timeout 120 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE tests/backends/$f.py \
    -k "seqs or tiles_gemm or split_rows or expert_order" > $OUT/r/t_$f.log 2>&1
  echo "== $f rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed|Fatal|^E  " $OUT/r/t_$f.log | head -30 | cut -c1-300
done
date
G='16,4,3,0,1;32,4,3,0,1;32,8,3,0,1;64,4,3,1,1;32,4,4,0,1;32,4,3,0,4;64,4,3,0,4;64,4,3,0,8;64,4,3,0,16;32,4,3,0,8;128,4,3,0,8;128,8,3,0,8;64,8,3,0,8;64,4,4,0,8;32,4,3,0,16'
timeout 220 python3 bench/cuda_tiles_gemm_bench.py --out $OUT/r --rows 16,64,128 --shapes 0,1,2,3,4,5 --configs "$G" 2>&1 | tail -18 | cut -c1-330
wait; date
timeout 80 python3 bench/cuda_step_profile.py .real/q8b.gguf --seqs 64 --depth 128 --steps 16 --out $OUT/r 2>&1 | grep -E "wall|gemm|split|norm|_kernel" | head -14 | cut -c1-110
date
