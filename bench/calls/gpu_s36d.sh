# Session 36, call d: only on an H200 (else it stops at once): zinc bench of the tree (session 35's matvec forms, not
# yet measured on the standing numbers' card): pp512 + tg128, tg128 at depth 16384 and 4096; then, with time left,
# the other three models (bench/calls/gpu_s36b.sh).
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo "not an H200"; exit 0; }
. bench/calls/ab_env.sh
date
zb s36_h200 -p 512 -n 128
zb s36_h200_d16384 -n 128 -d 16384
zb s36_h200_d4096 -n 128 -d 4096
bash bench/calls/gpu_s36b.sh
