# Session 8, call 4: where the fused rope's 1.6 us in the split kernel goes (bench/cuda_rope_attn_cost.py), at 64
# and 4096 cells in use.
. bench/gpu_env.sh
for n in 64 4096; do echo "cells $n"; mkdir -p $OUT/c$n; timeout 120 python3 bench/cuda_rope_attn_cost.py --cells $n --out $OUT/c$n; done
