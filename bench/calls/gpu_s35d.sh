# Session 35, call d: the Q4_K GLU two-warp programs unrolled twice (STREAMS_GLU, the tree now) against the one-warp
# ones of the tree before session 35 ("w1") and call c's unrolled-once form; two-warp one-trip forms of the O, down
# and QKV launches; the mmvq GPU tests; on an H200 zinc bench of the tree.
export AB_TIMEOUT=60
. bench/calls/ab_env.sh
G="(12,12288,4096,True)"
W1="mmvq.SHAPE_CONFIG={$G:(2,1,1,1,1,2,1)}"
ab --label u2
ab --label w1 --set "$W1"
sc w2u1 "$G:(2,1,2,1,1,2,1)"
sc w1u4 "$G:(2,1,1,1,1,2,4)"
sc o_w2u2 "(12,4096,4096,False):(2,1,2,1,1,2,2)"
sc d4_w2u2 "(12,4096,12288,False):(2,1,2,1,1,2,2)"
sc d6_w2u2 "(14,4096,12288,False):(2,1,2,1,1,2,2)"
sc qkv_w2 "(12,5120,4096,False):(2,1,2,1,1,2,1),(12,1024,4096,False):(2,1,2,1,1,2,1),(14,1024,4096,False):(2,1,2,1,1,2,1)"
ab --label u2b
ab --label w1b --set "$W1"
ab --label u2d16384 --depth 16384
rm -f $OUT/r/ab/*.npz
timeout 150 python3 -m pytest -q -x tests/backends/test_cuda_mmvq.py 2>&1 | tail -3
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  zb s35_h200_tg -p 512 -n 128
  zb s35_h200_d16384 -n 128 -d 16384
fi
