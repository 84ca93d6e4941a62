# Session 31, call h: on an H200, `zinc bench` of the tree (pp512 + tg128, tg128@d16384) and the deep row of 16 splits
# of 64 cells against session 26's 16 of 128; on an H100 every family's tiny model against the NumPy backend
# (check_families, F16 / Q8_0 / Q4_K_M) on the tree (the last layer's add with the output norm in one launch).
export AB_TIMEOUT=60
. bench/calls/ab_env.sh
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  B() { timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda "$@" -r 3 --json; }
  B -p 512 -n 128 > $OUT/r/bench.json 2> $OUT/r/bench.log; pp $OUT/r/bench.json
  B -p 0 -n 128 -d 16384 > $OUT/r/deep.json 2> $OUT/r/deep.log; pp $OUT/r/deep.json
  ab --label d16k --depth 16384
  ab --label d16k128 --depth 16384 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64),(8192,16,64),($L,16,128)]"
  rm -f $OUT/r/ab/*.npz
else
  timeout 230 python3 -m zinc.backends.cuda.check_families --out $OUT/r --ftypes F16,Q8_0,Q4_K_M > $OUT/r/families.log 2>&1; grep -v Warn $OUT/r/families.log | grep -v " ok$" | tail -6
fi
