# Prepared in session 34 for the next device time (about 4 minutes). (1) The decode attention launched early with the
# QKV projection triggering at its programs' end (PAIR_TRIGGER 2): an early launch lost ~90 µs a step with the
# projection triggering at its start (sessions 24-25, 33, 34), the attention's programs then resident beside the
# projection's; here they would be placed only as the projection finishes. (2) The first argmax pass's block.
# (3) The matvecs' and the argmax pass's share of the step (bench/cuda_skip_ceiling.py), not measured in session 34.
export AB_TIMEOUT=50
. bench/calls/ab_env.sh
EL="--set ATTN_PDL=((2,0),(0,1))"
ab --label base
ab --label pt2 --set PAIR_TRIGGER=2
ab --label pt2el --set PAIR_TRIGGER=2 $EL
ab --label base2
ab --label pt2el2 --set PAIR_TRIGGER=2 $EL
ab --label a1024 --set elementwise.ARGMAX_BLOCK=1024
ab --label d4096 --depth 4096
ab --label d4096pt2el --depth 4096 --set PAIR_TRIGGER=2 $EL
rm -f $OUT/r/ab/*.npz
for s in none argmax o down glu qkv; do
  timeout 40 python3 bench/cuda_skip_ceiling.py .real/q8b.gguf --skip $s --out $OUT/r 2>>$OUT/r/err.log | tail -1
done
# On an H200: the tree's zinc bench (the standing numbers' card).
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  zb s35_h200_tg -p 512 -n 128
  zb s35_h200_d16384 -n 128 -d 16384
fi
