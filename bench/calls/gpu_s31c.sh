# Session 31, call c: on an H200, `zinc bench` of the tree (pp512 + tg128, tg128@d16384); on either card, decode-step
# A/B pairs of the deep rows: depth 16384 with 16 splits of 64 cells (3 stages) against the tree's 16 of 128, depth
# 4096 with 16 of 128 (3 stages) against the tree's 16 of 64.
export AB_TIMEOUT=60
. bench/calls/ab_env.sh
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 512 -n 128 -r 3 --json > $OUT/r/bench.json 2> $OUT/r/bench.log; pp $OUT/r/bench.json
  timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 16384 -r 3 --json > $OUT/r/deep.json 2> $OUT/r/deep.log; pp $OUT/r/deep.json
fi
ab --label d16k --depth 16384
ab --label d16k64s3 --depth 16384 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64),(8192,16,64),($L,16,64,3)]"
ab --label d4k --depth 4096
ab --label d4k128s3 --depth 4096 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64),(8192,16,128,3),($L,16,128)]"
ab --label d16kb --depth 16384
ab --label d16k64s3b --depth 16384 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64),(8192,16,64),($L,16,64,3)]"
rm -f $OUT/r/ab/*.npz
