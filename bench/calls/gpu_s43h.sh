# Session 43, call h (any card, ~3 min; s43g without its grid and MoE bench, for a short budget): the GPU tests of
# the tile GEMM and the expert order; Qwen3-8B's 64-sequence step profile (call f: 10.900 ms); Qwen3.5-35B-A3B's with
# the expert order off (999) and on (5) (call e, off: 23.371 ms).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q; python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q) > /tmp/synth.log 2>&1 &
date
timeout 100 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE tests/backends/test_cuda_kernels.py tests/backends/test_cuda_moe_mmvq.py \
  -k "tiles_gemm or expert_order" > $OUT/r/t_h.log 2>&1
echo "== tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed|Fatal" $OUT/r/t_h.log | head -20 | cut -c1-300
wait; date
timeout 60 python3 bench/cuda_step_profile.py .real/q8b.gguf --seqs 64 --depth 128 --steps 16 --out $OUT/r 2>&1 | grep -E "wall|experts_gemm" | cut -c1-110
mv $OUT/r/step-profile-x64-d128.json $OUT/r/step-profile-q8b-x64-s43h.json
for m in 999 5; do
  timeout 60 python3 bench/cuda_step_profile.py .real/q35.gguf --seqs 64 --depth 128 --steps 8 --expert-order-min $m \
    --out $OUT/r 2>&1 | grep -E "wall|mmv|experts_gemm|delta|order" | cut -c1-110
  mv $OUT/r/step-profile-x64-d128.json $OUT/r/step-profile-q35-x64-s43h-order$m.json
done
date
