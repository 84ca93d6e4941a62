# Session 30, call i: the tree's rows (8 unrolled splits of 16 cells under 256 cells, 16 of 64 for 256-2,047) in
# `zinc bench`: pp512 + tg128, tg128@d1024, tg128@d16384.
. bench/calls/ab_env.sh
timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 512 -n 128 -r 3 --json > $OUT/r/bench.json 2> $OUT/r/bench.log; pp $OUT/r/bench.json
timeout 100 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 1024 -r 3 --json > $OUT/r/d1k.json 2> $OUT/r/d1k.log; pp $OUT/r/d1k.json
timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 16384 -r 3 --json > $OUT/r/deep.json 2> $OUT/r/deep.log; pp $OUT/r/deep.json
