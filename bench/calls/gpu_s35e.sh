# Session 35, call e: the Q6_K down projection as two-warp programs unrolled twice against the tree, repeated; every
# tiny family at Q4_K_M and Q6_K with the tree's GLU (check_families); zinc bench of the tree on whichever card.
export AB_TIMEOUT=60
. bench/calls/ab_env.sh
D6="mmvq.SHAPE_CONFIG={(14,4096,12288,False):(2,1,2,1,1,2,2)}"
ab --label tree
ab --label d6 --set "$D6"
ab --label tree2
ab --label d6b --set "$D6"
ab --label d6d16384 --depth 16384 --set "$D6"
rm -f $OUT/r/ab/*.npz
timeout 150 python3 -m zinc.backends.cuda.check_families --out $OUT/r/cf --ftypes Q4_K_M,Q6_K 2>&1 | tail -20
G=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && echo h200 || echo h100)
zb s35_${G}_tg -p 512 -n 128
zb s35_${G}_d16384 -n 128 -d 16384
