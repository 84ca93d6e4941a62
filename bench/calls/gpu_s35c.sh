# Session 35, call c: the Q4_K GLU as two-warp programs (STREAMS_GLU, the tree now) against one-warp ones (the
# tree before, "w1"), more GLU forms, the same at depth; the mmvq GPU tests; on an H200 zinc bench of the tree.
export AB_TIMEOUT=60
. bench/calls/ab_env.sh
G="(12,12288,4096,True)"
W1="mmvq.SHAPE_CONFIG={$G:(2,1,1,1,1,2,1)}"
ab --label w2
ab --label w1 --set "$W1"
ab --label w2b
ab --label w1b --set "$W1"
sc w2u2 "$G:(2,1,2,1,1,2,2)"
sc w4 "$G:(2,1,4,1,1,2,1)"
sc r1w2 "$G:(1,1,2,1,1,2,1)"
sc w2p2 "$G:(2,2,2,1,1,2,1)"
ab --label w2d4096 --depth 4096
ab --label w1d4096 --depth 4096 --set "$W1"
ab --label w2d16384 --depth 16384
ab --label w1d16384 --depth 16384 --set "$W1"
rm -f $OUT/r/ab/*.npz
timeout 150 python3 -m pytest -q -x tests/backends/test_cuda_mmvq.py 2>&1 | tail -3
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  zb s35_h200_tg -p 512 -n 128
  zb s35_h200_d16384 -n 128 -d 16384
fi
