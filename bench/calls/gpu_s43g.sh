# Session 43, call g (any card, ~5 min): after the tile prefetch and the few-row matvec split were removed (both
# lost) and the expert order became one ranking kernel (`moe.order_kernel`, was align_pairs: 35 us a layer): the GPU
# tests of the tile GEMM and the expert order; Qwen3.5-35B-A3B's 64-sequence step with the order off (999) and on
# (5), and zinc bench tg64 x64 the faster way; Qwen3-8B's 64-sequence step profile (call f: 10.900 ms); the tile GEMM's
# grid at 16 and 64 rows timed as CUDA graphs (launch by launch, the small split shapes were host-bound).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q; python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q) > /tmp/synth.log 2>&1 &
date
timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE tests/backends/test_cuda_kernels.py tests/backends/test_cuda_moe_mmvq.py \
  -k "tiles_gemm or expert_order" > $OUT/r/t_g.log 2>&1
echo "== tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed|Fatal" $OUT/r/t_g.log | head -20 | cut -c1-300
G='32,4,3,0,1;64,4,3,0,1;64,8,3,0,1;128,8,3,0,1;64,4,3,1,1;64,4,3,0,8;64,8,3,0,8;128,8,3,0,8;128,4,3,0,8;64,4,3,0,4;128,8,3,0,4;64,4,4,0,8;32,4,3,0,8'
timeout 150 python3 bench/cuda_tiles_gemm_bench.py --out $OUT/r --rows 16,64 --shapes 0,1,2,3,4,5 --configs "$G" 2>&1 | tail -12 | cut -c1-330
wait; date
timeout 100 python3 bench/cuda_step_profile.py .real/q8b.gguf --seqs 64 --depth 128 --steps 16 --out $OUT/r 2>&1 | grep -E "wall|experts_gemm" | cut -c1-110
mv $OUT/r/step-profile-x64-d128.json $OUT/r/step-profile-q8b-x64-s43g.json
for m in 999 5; do
  timeout 100 python3 bench/cuda_step_profile.py .real/q35.gguf --seqs 64 --depth 128 --steps 8 --expert-order-min $m \
    --out $OUT/r 2>&1 | grep -E "wall|mmv|experts_gemm|delta|order" | cut -c1-110 | tee /tmp/prof$m.txt
  mv $OUT/r/step-profile-x64-d128.json $OUT/r/step-profile-q35-x64-s43g-order$m.json
done
w999=$(grep -oP "wall \K[0-9.]+" /tmp/prof999.txt); w5=$(grep -oP "wall \K[0-9.]+" /tmp/prof5.txt)
best=$(python3 -c "print(5 if $w5 < $w999 else 999)"); echo "order $best is faster ($w5 vs $w999 ms)"
date
timeout 150 python3 -c "import sys; import zinc.backends.cuda.ops as o; o.EXPERT_ORDER_MIN_TOKENS = $best; from zinc.cli import main; sys.exit(main(sys.argv[1:]))" \
  bench -m .real/q35.gguf --backend cuda -p 0 -n 64 --parallel 64 -r 2 --json > $OUT/r/s43g_q35_par64_order$best.json 2> /tmp/q35.log
grep -E "verified|: run" /tmp/q35.log | cut -c1-200
date
