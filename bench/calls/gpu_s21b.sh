# Session 21: two matvec experiments on every Qwen3-8B decode shape, µs in replayed graphs:
# 1) the streams matvec as a persistent grid (bench/cuda_mmvs_persist.py) against its usual grid;
# 2) the next matvec's weights prefetched into the L2 on a side branch while norm_quantize chains run
#    (bench/cuda_l2_prefetch.py).
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p $OUT/r
timeout 240 python3 bench/cuda_l2_prefetch.py --out $OUT/r 2>&1 | grep -v -i warn | tail -60
timeout 200 python3 bench/cuda_mmvs_persist.py --out $OUT/r 2>&1 | grep -v -i warn | tail -32
tar czf $OUT/s21b.tgz -C $OUT r && rm -rf $OUT/r
