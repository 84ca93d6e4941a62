# Session 33, call a: the cluster-merged decode attention on for caches of at most 4 splits (`ops.ATTN_CLUSTER = 4`,
# the split taking the combine's trigger as 3): its GPU tests, the decode-step A/B against no clusters at depth 0
# and 1,024 (where 16 splits are not clustered: equal), then `zinc bench` of the tree (pp512 + tg128, @4096, @16384).
export AB_TIMEOUT=60
. bench/calls/ab_env.sh
timeout 240 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_kernels.py \
  -k "cluster or q8_output or decode_attention" 2>&1 | tail -3
ab --label t0
ab --label tnocl --set ATTN_CLUSTER=0
ab --label t0b
ab --label d1k --depth 1024
rm -f $OUT/r/ab/*.npz
zb bench -p 512 -n 128
zb d4k -p 0 -n 128 -d 4096
zb deep -p 0 -n 128 -d 16384
