# Session 35, call h: only on an H200 (else it stops at once): zinc bench of the tree (the standing numbers' card).
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo "not an H200"; exit 0; }
. bench/calls/ab_env.sh
zb s35_h200 -p 512 -n 128
zb s35_h200_d16384 -n 128 -d 16384
