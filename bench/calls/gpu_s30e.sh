# Session 30, call e: on an H200 (any card: the A/B pair still runs), the new short-cache row (8 splits of 16 cells,
# the loop unrolled) against the row before, in the decode step, then `zinc bench` pp512 + tg128 and tg128@16384.
. bench/calls/ab_env.sh
ab --label new
ab --label old --set "ATTN_SPLITS=[(256,4,32),(2048,8,64),(8192,16,64),($L,16,128)]"
ab --label new2
timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 512 -n 128 -r 3 --json > $OUT/r/bench.json 2> $OUT/r/bench.log; pp $OUT/r/bench.json
timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 16384 -r 3 --json > $OUT/r/deep.json 2> $OUT/r/deep.log; pp $OUT/r/deep.json
rm -f $OUT/r/ab/*.npz
