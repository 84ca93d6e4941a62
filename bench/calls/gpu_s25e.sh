# Session 25: the small kernels' grids and the streams matvec's configurations under PDL (the decode step as it
# now launches), tg128 A/B in fresh processes on one machine (mmvq.SHAPE_CONFIG overrides one shape at a time).
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
[ -f .real/q8b.gguf ] || python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
ab() { timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log | cut -c1-55; }
sc() { ab --label $1 --set "mmvq.SHAPE_CONFIG={$2}"; }
ab --label base1
ab --label nb2 --set mmvq.NORM_BLOCKS=2
ab --label nb1w1 --set mmvq.NORM_WARPS=1
ab --label nb1w4 --set mmvq.NORM_WARPS=4
ab --label qx1 --set mmvq.QX_BLOCKS=1
ab --label qx4 --set mmvq.QX_BLOCKS=4
sc glu4 "(12,12288,4096,True):(4,1,1,1,1,2,1)"
sc gluR "(12,12288,4096,True):(2,2,1,1,1,2,2)"
sc o2 "(12,4096,4096,False):(2,1,1,1,1,2,1)"
sc oU "(12,4096,4096,False):(2,1,1,1,1,2,2)"
sc qkvR "(12,5120,4096,False):(2,2,1,1,1,2,2),(12,6144,4096,False):(2,2,1,1,1,2,2)"
sc dn2 "(12,4096,12288,False):(2,1,1,1,1,2,1)"
sc dn6 "(14,4096,12288,False):(2,2,1,1,1,2,1)"
sc v6 "(14,1024,4096,False):(2,1,1,1,1,2,2)"
sc lm2 "(14,151936,4096,False):(2,1,1,1,1,2,1)"
ab --label base2
rm -f $OUT/r/ab/*.npz
tar czf $OUT/r/ab.tgz -C $OUT/r ab; rm -rf $OUT/r/ab; tail -3 $OUT/r/err.log
