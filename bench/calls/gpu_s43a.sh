# Session 43, call a (any card, ~7 min): session 42's two unmeasured changes.
# 1. The tile GEMM (64-row decode steps) with each step's weight bytes loaded 1 or 2 steps ahead (PREFETCH):
#    Qwen3-8B Q4_K_M's shapes at 16 / 64 / 128 rows, tiles_shape's configurations without and with it; then zinc
#    bench tg64 of 64 sequences with ops.TILES_PREFETCH 0, 1, 2 (session 42 H100, 0: tg128 4,249.5).
# 2. Qwen3.5-35B-A3B Q4_K_M at 64 sequences, the MoE matvecs' pairs launched expert by expert (EXPERT_ORDER_MIN_TOKENS
#    5; off by default until measured) against token order (999): a step's kernels each way; zinc bench tg64 of 64
#    sequences with it on (session 42 H100, token order: 2,279.7; llama.cpp H200 anchor 2,436, target >= 4,900).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
date
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /tmp/synth.log 2>&1 &
G='32,4,3,0,1;32,4,3,0,1,1;32,4,3,0,1,2;32,4,2,0,1,2;64,4,3,0,8;64,4,3,0,8,1;64,4,3,0,8,2;64,4,3,1,1;64,4,3,1,1,1;64,4,3,1,1,2;64,8,3,1,1,2'
timeout 150 python3 bench/cuda_tiles_gemm_bench.py --out $OUT/r --rows 16,64,128 --shapes 0,1,2,3,4,5 --configs "$G" 2>&1 | tail -18 | cut -c1-260
wait; date
for pf in 0 1 2; do
  timeout 100 python3 -c "import sys; import zinc.backends.cuda.ops as o; o.TILES_PREFETCH = $pf; from zinc.cli import main; sys.exit(main(sys.argv[1:]))" \
    bench -m .real/q8b.gguf --backend cuda -p 0 -n 64 --parallel 64 -r 1 --json > $OUT/r/s43_par64_pf$pf.json 2> /tmp/s43_par64_pf$pf.log
  echo "TILES_PREFETCH=$pf"; grep -E "verified|x64: run" /tmp/s43_par64_pf$pf.log | cut -c1-200
done
rm -f .real/q8b.gguf; date
timeout 100 python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q 2>&1 | tail -1
for m in 999 5; do
  timeout 100 python3 bench/cuda_step_profile.py .real/q35.gguf --seqs 64 --depth 128 --steps 8 --expert-order-min $m \
    --out $OUT/r 2>&1 | grep -E "wall|mmv|experts_gemm|delta|align" | cut -c1-110
  mv $OUT/r/step-profile-x64-d128.json $OUT/r/step-profile-q35-x64-order$m.json
done
date
timeout 150 python3 -c "import sys; import zinc.backends.cuda.ops as o; o.EXPERT_ORDER_MIN_TOKENS = 5; from zinc.cli import main; sys.exit(main(sys.argv[1:]))" \
  bench -m .real/q35.gguf --backend cuda -p 0 -n 64 --parallel 64 -r 2 --json \
  > $OUT/r/s43_q35_par64.json 2> $OUT/r/s43_q35_par64.log
tail -4 $OUT/r/s43_q35_par64.log | cut -c1-250
date
