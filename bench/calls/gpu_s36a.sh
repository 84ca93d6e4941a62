# Prepared in session 35 for the next device time (about 3 minutes; on an H200 about 5). (1) The QKV pair's halves
# loading a whole 4,096-value row in one loop trip before their PDL wait (mmvq.PAIR_UNROLL), as session 35's GLU form
# does: (2, 2) at one warp, (1, 2) with two-warp halves (SHAPE_CONFIG of the Q + K and V shapes), against the tree.
# (2) On an H200: zinc bench of the tree (the standing numbers' card; session 35's change is unmeasured there).
export AB_TIMEOUT=60
. bench/calls/ab_env.sh
W2="mmvq.SHAPE_CONFIG={(12,5120,4096,False):(2,1,2,1,1,2,1),(12,1024,4096,False):(2,1,2,1,1,2,1),(14,1024,4096,False):(2,1,2,1,1,2,1)}"
ab --label tree
ab --label pu22 --set "mmvq.PAIR_UNROLL=(2,2)"
ab --label pu12w2 --set "mmvq.PAIR_UNROLL=(1,2)" --set "$W2"
ab --label pu12 --set "mmvq.PAIR_UNROLL=(1,2)"
ab --label tree2
ab --label pu22b --set "mmvq.PAIR_UNROLL=(2,2)"
# (3) The down projections' whole rows in one trip: Q4_K (384 units) at two units x two warps or one unit x four
# warps, unrolled three times; Q6_K (192 units) at two warps unrolled three times (session 35's form has 2/3 of it).
sc d4_w2u3 "(12,4096,12288,False):(2,2,2,1,1,2,3)"
sc d4_w4u3 "(12,4096,12288,False):(2,1,4,1,1,2,3)"
sc d6_w2u3 "(14,4096,12288,False):(2,1,2,1,1,2,3)"
ab --label tree3
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  zb s36_h200 -p 512 -n 128
  zb s36_h200_d4096 -n 128 -d 4096
  zb s36_h200_d16384 -n 128 -d 16384
fi
