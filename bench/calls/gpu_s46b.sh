# Session 46, call b (~7 min, for an H200; on another card the same numbers for that card): zinc bench of the tree on
# the anchor model: pp512 + tg128, tg128 at depth 16384 (3 runs each), then tg64 of 8 and 64 sequences. The standing
# H200 numbers are session 38's (pp512 23,142, tg128 531.3, tg128@16384 399.4); 64 sequences were never run on an H200.
export AB_TIMEOUT=${AB_TIMEOUT:-150}
. bench/calls/ab_env.sh
zb s46b_pp_tg -p 512 -n 128
zb s46b_d16384 -p 0 -n 128 -d 16384
timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 64 --parallel 8,64 -r 1 --json \
  > $OUT/r/s46b_parallel.json 2> $OUT/r/s46b_parallel.log; pp $OUT/r/s46b_parallel.json
