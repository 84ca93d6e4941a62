# Prepared in session 20 (not run): the GLU matvec that quantizes its own 32-row blocks. 1) bench/cuda_glu_blocks.py:
# check against mmvs + quantize_x at real shapes, time it (mmvs GLU alone / + quantize_x / blocks, capped or not);
# 2) bench/wip/glu-blocks.patch (the same kernel as mmvq.glu_blocks, wired into CudaOps.matmul_glu, with tests) on a
# copy of src: the GPU tests of mmvq, then tg128 against the tree as it is, fresh processes (cuda_tree_ab).
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
timeout 200 python3 bench/cuda_glu_blocks.py --out $OUT/r 2>&1 | grep -v -i warn | tail -12
rm -rf /tmp/p && mkdir -p /tmp/p && cp -r src tests /tmp/p/ && (cd /tmp/p && (git apply $OLDPWD/bench/wip/glu-blocks.patch || patch -p1 < $OLDPWD/bench/wip/glu-blocks.patch)) && echo patched
(cd /tmp/p && PYTHONPATH=/tmp/p/src timeout 150 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_mmvq.py 2>&1 | tail -2)
wait
for i in 1 2; do
  timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --label head$i --out $OUT/r/ab 2>>$OUT/r/err.log
  PYTHONPATH=/tmp/p/src timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --label blocks$i --out $OUT/r/ab 2>>$OUT/r/err.log
done
rm -f $OUT/r/ab/*.npz
tar czf $OUT/s21a.tgz -C $OUT r && rm -rf $OUT/r
