# Session 34: where the step's time goes with programmatic dependent launches in place (the profiler's per-kernel
# times overlap): the replay with one kind of launch left out (bench/cuda_skip_ceiling.py); the first argmax pass's
# block (ARGMAX_BLOCK, 38 programs of 4096 values) in A/B pairs; then, on an H200, `zinc bench` pp512 + tg128 of the tree.
export AB_TIMEOUT=50
. bench/calls/ab_env.sh
for s in none argmax qkv o glu down lm_head; do
  timeout 60 python3 bench/cuda_skip_ceiling.py .real/q8b.gguf --skip $s --out $OUT/r 2>>$OUT/r/err.log | tail -1
done
ab --label a4096
ab --label a1024 --set elementwise.ARGMAX_BLOCK=1024
ab --label a4096b
rm -f $OUT/r/ab/*.npz
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then zb s34 -p 512 -n 128; fi
