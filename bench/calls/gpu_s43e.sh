# Session 43, call e (any card, ~6 min): the tile GEMM's session-43 shapes (ops.tiles_shape: plain weights 64 columns
# in 8 K-splits, the GLU pair 32 columns unswapped up to 64 rows) and few sequences as 4-row matvecs
# (ops.MATVEC_SPLIT_MAX_ROWS 16) against the tile GEMM past 4 rows (4, the default): zinc bench tg64 of 2, 4, 8, 16
# and 64 sequences each way (this session's H100 before the new shapes: x64 4,258.2); then Qwen3.5-35B-A3B's 64-sequence
# step profile with the new shapes (before: 25.336 ms a step, experts_gemm_kernel 5,950 us).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /tmp/synth.log 2>&1
timeout 60 python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > /tmp/synth35.log 2>&1 &
date
for sp in 4 16; do
  timeout 150 python3 -c "import sys; import zinc.backends.cuda.ops as o; o.MATVEC_SPLIT_MAX_ROWS = $sp; from zinc.cli import main; sys.exit(main(sys.argv[1:]))" \
    bench -m .real/q8b.gguf --backend cuda -p 0 -n 64 --parallel 2,4,8,16,64 -r 1 --json > $OUT/r/s43e_split$sp.json 2> /tmp/sp$sp.log
  echo "MATVEC_SPLIT_MAX_ROWS=$sp"; grep -E "verified|: run" /tmp/sp$sp.log | cut -c1-200
done
wait; date
timeout 100 python3 bench/cuda_step_profile.py .real/q35.gguf --seqs 64 --depth 128 --steps 8 --out $OUT/r 2>&1 \
  | grep -E "wall|mmv|experts_gemm|delta|align" | cut -c1-110
mv $OUT/r/step-profile-x64-d128.json $OUT/r/step-profile-q35-x64-s43e.json
date
