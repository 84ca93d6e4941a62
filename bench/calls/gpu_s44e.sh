# Session 44, calls e-i (run one after another on the machine call d started, typed inline; recorded here): zinc bench
# with the tiles' PTX on (then `moe.NIBBLE_ASM`, since removed: the PTX is always on a GPU now), the tiles grids at 64
# rows (sums 1: the splits summed in the launch; then a 7th field after a since-removed 6th, "steps" = 1, shown here
# in today's 6-field form), zinc bench after `ops.tiles_shape` took the GLU's 64 columns swapped in 2 K-splits, and the
# final step profile.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p $OUT/r
# e: PTX on, sums off
python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 64 --parallel 8,64 -r 1 --json > $OUT/r/s44e_asm.json
python3 bench/cuda_tiles_gemm_bench.py --rows 64 --shapes 3,0 --out $OUT/r \
  --configs "32,4,3,0,1;32,4,3,0,2,1;64,4,3,0,2,1;128,8,3,0,16"
# f: gate + up and down
python3 bench/cuda_tiles_gemm_bench.py --rows 64 --shapes 3,4 --out $OUT/r/f \
  --configs "64,4,3,0,2,1;64,4,3,0,4,1;64,4,3,1,2,1;128,8,3,0,2,1;128,4,3,1,4,1;32,4,3,0,4,1;64,4,3,0,8;64,4,3,0,8,1;128,8,3,0,8"
# g: zinc bench with the GLU shape (64, 2, swapped) at 64 rows
python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 64 --parallel 64 -r 1 --json > $OUT/s44f.json
# h: gate + up around it
python3 bench/cuda_tiles_gemm_bench.py --rows 64 --shapes 3 --out $OUT \
  --configs "64,4,3,1,2,1;64,4,3,1,4,1;128,4,3,1,2,1;64,4,4,1,2,1;64,8,3,1,2,1;32,4,3,1,2,1"
# i: the step
python3 bench/cuda_step_profile.py .real/q8b.gguf --seqs 64 --depth 128 --steps 12 --out $OUT
