# Session 31, call f: `zinc bench` of the tree (pp512 + tg128, tg128@d4096, tg128@d16384) on whichever card comes;
# decode-step A/B at depth 16384: the combine in 32-dim programs (COMBINE_WHOLE 1024) against whole heads; on an
# H200 also the deep row of 16 splits of 64 cells against session 26's 16 of 128.
export AB_TIMEOUT=60
. bench/calls/ab_env.sh
B() { timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda "$@" -r 3 --json; }
B -p 512 -n 128 > $OUT/r/bench.json 2> $OUT/r/bench.log; pp $OUT/r/bench.json; date
B -p 0 -n 128 -d 4096 > $OUT/r/d4k.json 2> $OUT/r/d4k.log; pp $OUT/r/d4k.json; date
B -p 0 -n 128 -d 16384 > $OUT/r/deep.json 2> $OUT/r/deep.log; pp $OUT/r/deep.json; date
ab --label d16k --depth 16384
ab --label d16kc32 --depth 16384 --set attention.COMBINE_WHOLE=1024
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  ab --label d16k128 --depth 16384 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64),(8192,16,64),($L,16,128)]"
  ab --label d16kb --depth 16384
fi
rm -f $OUT/r/ab/*.npz
