# Session 39, call b (any card): sequences decoding together on the synthetic Qwen3.5-35B-A3B Q4_K_M (hybrid
# Gated DeltaNet + attention, 256 experts; llama-batched-bench anchor: 2,436 tok/s at 64 sequences, target 4,900):
# zinc bench tg128 alone and of 8 and 64 sequences after 128 prompt tokens each.
. bench/calls/ab_env.sh
[ -f .real/q35moe.gguf ] || python3 -m zinc.synth qwen35-35b-a3b -o .real/q35moe.gguf --ftype Q4_K_M -q > $OUT/r/synth2.log 2>&1
date
timeout 300 python3 -m zinc.cli bench -m .real/q35moe.gguf --backend cuda -p 0 -n 128 --parallel 8,64 -r 3 --json \
  > $OUT/r/s39_q35moe_par.json 2> $OUT/r/s39_q35moe_par.log; pp $OUT/r/s39_q35moe_par.json; tail -3 $OUT/r/s39_q35moe_par.log
date
