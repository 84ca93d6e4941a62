# Session 21: the streams matvec as a persistent grid (bench/cuda_mmvs_persist.py) against its usual grid, every
# Qwen3-8B decode shape: check, then µs a call in a replayed graph.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p $OUT/r
timeout 300 python3 bench/cuda_mmvs_persist.py --out $OUT/r 2>&1 | grep -v -i warn | tail -40
tar czf $OUT/s21b.tgz -C $OUT r && rm -rf $OUT/r
