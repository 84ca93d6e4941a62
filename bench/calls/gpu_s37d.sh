# Session 37, call d: only on an H200 (else it stops at once), with the last ~170 s of device time: zinc bench of the
# tree, pp512 + tg128 (the tg128 >= 530 target), then tg128 at depth 16384 if time is left.
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo "not an H200"; exit 0; }
. bench/calls/ab_env.sh
date
zb s37_h200 -p 512 -n 128
zb s37_h200_d16384 -n 128 -d 16384
