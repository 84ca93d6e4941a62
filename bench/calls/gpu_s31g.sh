# Session 31, call g: where a decode step's time goes on the tree (bench/cuda_step_profile.py at depth 0 and 16384);
# on an H200 first `zinc bench` (pp512 + tg128, tg128@d4096, tg128@d16384) and the deep row of 16 splits of 64 cells
# against session 26's 16 of 128.
export AB_TIMEOUT=60
. bench/calls/ab_env.sh
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  B() { timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda "$@" -r 3 --json; }
  B -p 512 -n 128 > $OUT/r/bench.json 2> $OUT/r/bench.log; pp $OUT/r/bench.json
  B -p 0 -n 128 -d 16384 > $OUT/r/deep.json 2> $OUT/r/deep.log; pp $OUT/r/deep.json
  ab --label d16k --depth 16384
  ab --label d16k128 --depth 16384 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64),(8192,16,64),($L,16,128)]"
  B -p 0 -n 128 -d 4096 > $OUT/r/d4k.json 2> $OUT/r/d4k.log; pp $OUT/r/d4k.json
fi
for d in 0 16384; do
  timeout 90 python3 bench/cuda_step_profile.py .real/q8b.gguf --depth $d --out $OUT/r/prof$d 2>&1 | grep -v Warn | sed -n 1,12p
done
rm -f $OUT/r/ab/*.npz
