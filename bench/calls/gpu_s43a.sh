# Session 43, call a (any card, ~4 min): Qwen3.5-35B-A3B Q4_K_M at 64 sequences, the MoE matvecs' pairs launched
# expert by expert (EXPERT_ORDER_MIN_TOKENS 5, session 42's default, unmeasured) against token order (min 999): a
# step's kernels each way; then zinc bench tg64 of 64 sequences with the default (llama.cpp H200 anchor 2,436,
# target >= 4,900; session 42 H100 before the order: 2,279.7).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
date
timeout 100 python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q 2>&1 | tail -1
for m in 999 5; do
  timeout 100 python3 bench/cuda_step_profile.py .real/q35.gguf --seqs 64 --depth 128 --steps 8 --expert-order-min $m \
    --out $OUT/r 2>&1 | grep -E "wall|mmv|experts_gemm|delta|sort" | cut -c1-110
  mv $OUT/r/step-profile-x64-d128.json $OUT/r/step-profile-q35-x64-order$m.json
done
date
timeout 170 python3 -m zinc.cli bench -m .real/q35.gguf --backend cuda -p 0 -n 64 --parallel 64 -r 2 --json \
  > $OUT/r/s43_q35_par64.json 2> $OUT/r/s43_q35_par64.log
tail -4 $OUT/r/s43_q35_par64.log | cut -c1-250
date
