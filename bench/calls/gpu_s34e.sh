# Session 34, the last call (little device time left after machines failed to start): the matvecs' and the argmax
# pass's share of the step by leaving them out (bench/cuda_skip_ceiling.py), against the whole step.
. bench/calls/ab_env.sh
for s in none argmax o down glu qkv; do
  timeout 40 python3 bench/cuda_skip_ceiling.py .real/q8b.gguf --skip $s --out $OUT/r 2>>$OUT/r/err.log | tail -1
done
