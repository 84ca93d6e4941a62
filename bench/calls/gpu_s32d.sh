# Session 32, call d (prepared, not run): the cluster-merged decode attention (`ops.ATTN_CLUSTER`, see gpu_s32c.sh)
# at depth: 1,024 cells (16 or 8 splits of 64 in clusters against 16 of 64 combined, and 8 of 64 combined), 4,096 and
# 16,384 cells (their 16 splits as clusters of 16, a non-portable size).
export AB_TIMEOUT=60
. bench/calls/ab_env.sh
ab --label d1k --depth 1024
ab --label d1kcl --depth 1024 --set ATTN_CLUSTER=True
ab --label d1kcl8 --depth 1024 --set ATTN_CLUSTER=True --set "ATTN_SPLITS=[(256,4,32,0),(2048,8,64),(8192,16,64),($L,16,64,3)]"
ab --label d1k8 --depth 1024 --set "ATTN_SPLITS=[(256,4,32,0),(2048,8,64),(8192,16,64),($L,16,64,3)]"
ab --label d4k --depth 4096
ab --label d4kcl --depth 4096 --set ATTN_CLUSTER=True
ab --label d16k --depth 16384
ab --label d16kcl --depth 16384 --set ATTN_CLUSTER=True
rm -f $OUT/r/ab/*.npz
