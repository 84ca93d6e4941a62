# Session 21: what a grid barrier costs in one persistent Triton kernel (bench/cuda_grid_barrier.py), against an
# empty kernel node in a graph: the number a persistent decode kernel's design starts from.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p $OUT/r
timeout 150 python3 bench/cuda_grid_barrier.py --out $OUT/r 2>&1 | grep -v -i warn | tail -20
tar czf $OUT/s21e.tgz -C $OUT r && rm -rf $OUT/r
