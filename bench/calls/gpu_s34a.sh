# Prepared in session 33 for the next device time: whether clusters lost at depth because of the split's early
# trigger rather than the cluster itself. Session 33 measured clusters of 8 and 16 splits at depth only with the split
# triggering after its loop (CLUSTER_TRIGGER 3, which won at depth 0: 2,190 against 2,231 µs with no trigger): here
# clusters of 16 at depth 1,024 / 4,096 / 16,384 with no trigger (the output projection launches when the split
# exits), against the tree (16 splits combined) on the same card.
export AB_TIMEOUT=60
. bench/calls/ab_env.sh
for d in 1024 4096 16384; do
  ab --label d$d --depth $d
  ab --label d${d}cl16t0 --depth $d --set ATTN_CLUSTER=16 --set attention.CLUSTER_TRIGGER=0
  ab --label d${d}cl16t3 --depth $d --set ATTN_CLUSTER=16
done
rm -f $OUT/r/ab/*.npz
