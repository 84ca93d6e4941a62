# Session 37, call a: only on an H200 (else it stops at once). zinc bench of the tree (session 35's matvec forms and
# session 37's attention launches, never yet measured on an H200): pp512 + tg128 and tg128 at depth 16384; then
# tg128@16384 A/Bs of the deep-cache attention row on this card (the wide row, 16 splits of 128 cells at 3 stages
# and 4 warps, was chosen in session 26 against 32 of 64 only): 8 warps, 128 cells at 4 stages (206 KB of shared
# memory offline, past attention.SMEM_BUDGET's 160 KB: set higher for it), 64 cells at 3 and 4 stages (more tiles
# in flight) and session 36's launches (ATTN_PDL before); then kernel rows at 16,512 cells (bench/cuda_attn_stream.py
# --rows: splits, cells a step, stages, warps), 33 splits among them (264 programs: two on each of the 132
# multiprocessors); last zinc bench at depth 4096.
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo "not an H200"; exit 0; }
export AB_TIMEOUT=${AB_TIMEOUT:-150} AB_COLS=${AB_COLS:-170}
. bench/calls/ab_env.sh
date
zb s37_h200 -p 512 -n 128
zb s37_h200_d16384 -n 128 -d 16384
W() { echo "ATTN_SPLITS_WIDE=[(256,4,32,0),(2048,16,64),(8192,16,64),($L,$1)]"; }
ab --label t16k --depth 16384
ab --label w8 --depth 16384 --set "$(W 16,128,3,8)"
ab --label b128s4 --depth 16384 --set attention.SMEM_BUDGET=200000 --set "$(W 16,128,4,4)"
ab --label s64x4 --depth 16384 --set "$(W 16,64,4,4)"
ab --label s16x64 --depth 16384 --set "$(W 16,64,3,4)"
ab --label t16k2 --depth 16384
ab --label oldpdl --depth 16384 --set "ATTN_PDL=((0,0),(0,1))"
date
timeout 100 python3 bench/cuda_attn_stream.py --cells 16512 --out $OUT/r --rows "[(16,128,3,4),(16,128,3,8),(16,64,3,4),(16,64,4,4),(16,64,5,4),(33,64,3,4)]" 2>&1 | grep -v Warn | grep -v "^S \|check"
zb s37_h200_d4096 -n 128 -d 4096
