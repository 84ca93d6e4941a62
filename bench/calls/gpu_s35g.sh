# Session 35, call g (short, on call f's warm machine): the output projection as two-warp programs, the norm and
# quantize launches' widths, against the tree.
export AB_TIMEOUT=40
. bench/calls/ab_env.sh
ab --label tree
sc lm_w2u2 "(14,151936,4096,False):(4,1,2,1,1,2,2)"
sc lm_r2w2u2 "(14,151936,4096,False):(2,1,2,1,1,2,2)"
ab --label nw8 --set mmvq.NORM_WARPS=8
ab --label qx4 --set mmvq.QX_BLOCKS=4
ab --label tree2
