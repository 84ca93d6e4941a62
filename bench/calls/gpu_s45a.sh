# Session 45, call a (any card, ~7 min; written at the end of session 44 for the next): what session 44's device time
# left unmeasured. zinc bench tg64 of Qwen3-8B at 1, 8, 16, 64 sequences (session 44 H100: 461.1 / 1,277.3 / - /
# 7,078.4); the Qwen3.5-35B-A3B 64-sequence step (session 43 H100: 22.358 ms, before the tiles' PTX and the GLU split);
# the gate + up pair at 16, 32 and 128 rows with its K split and summed in the launch (the 6th config field), against
# today's shapes (`ops.tiles_shape`: 32 unswapped whole at <= 32 rows, 64 swapped whole at 128).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q; python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q) > /tmp/synth.log 2>&1 &
timeout 200 python3 bench/cuda_tiles_gemm_bench.py --rows 16,32,128 --shapes 3 --out $OUT/r \
  --configs "32,4,3,0,1;64,4,3,1,1;32,4,3,0,2,1;64,4,3,1,2,1;64,4,3,1,4,1;32,4,3,1,2,1;64,4,3,0,2,1" 2>&1 | grep -E "^gate"
wait
timeout 120 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 64 --parallel 8,16,64 -r 1 --json \
  > $OUT/r/s45a-q8b.json 2> /tmp/s.log; grep -E "verified|: run|Error" /tmp/s.log | cut -c1-160
timeout 90 python3 bench/cuda_step_profile.py .real/q35.gguf --seqs 64 --depth 128 --steps 8 --out $OUT/r 2>&1 \
  | grep -E "wall|mmv|experts_gemm|delta|order|align" | cut -c1-110
