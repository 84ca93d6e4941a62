# Prepared in session 20 (not run): the GLU matvec that quantizes its own 32-row blocks (bench/cuda_glu_blocks.py):
# check against mmvs + quantize_x at real shapes, then time it (mmvs GLU alone / + quantize_x / blocks, capped or not).
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p $OUT/r
timeout 300 python3 bench/cuda_glu_blocks.py --out $OUT/r 2>&1 | grep -v -i warn | tail -12
tar czf $OUT/s21a.tgz -C $OUT r && rm -rf $OUT/r
