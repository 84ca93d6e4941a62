# Session 35, call f: the tree (STREAMS_GLU, STREAMS_LONG6) against session 34's configurations ("s34") in A/B
# pairs at 128 cells and at depth; the mmvq GPU tests; every tiny family at Q4_K_M and Q6_K; zinc bench.
export AB_TIMEOUT=60
. bench/calls/ab_env.sh
S34="mmvq.SHAPE_CONFIG={(12,12288,4096,True):(2,1,1,1,1,2,1),(14,4096,12288,False):(2,1,1,1,1,2,2)}"
ab --label tree
ab --label s34 --set "$S34"
ab --label tree2
ab --label s34b --set "$S34"
ab --label treed4096 --depth 4096
ab --label s34d4096 --depth 4096 --set "$S34"
rm -f $OUT/r/ab/*.npz
timeout 120 python3 -m pytest -q -x tests/backends/test_cuda_mmvq.py 2>&1 | tail -2
timeout 120 python3 -m zinc.backends.cuda.check_families --out $OUT/r/cf --ftypes Q4_K_M,Q6_K 2>&1 | tail -1
G=$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && echo h200 || echo h100)
zb s35_${G}_final -p 512 -n 128
zb s35_${G}_final_d16384 -n 128 -d 16384
