# Session 43, call b (any card, ~3 min; the short form of s43a's first half): the tile GEMM with and without its
# weight bytes loaded 1 or 2 steps ahead (PREFETCH) at 64 rows for Qwen3-8B Q4_K_M's Q, gate + up and down shapes, then
# zinc bench tg64 of 64 sequences with ops.TILES_PREFETCH 0 and 2 (the baseline rerun: the card may differ).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /tmp/synth.log 2>&1 &
G='32,4,3,0,1;32,4,3,0,1,1;32,4,3,0,1,2;64,4,3,0,8;64,4,3,0,8,2;64,4,3,1,1;64,4,3,1,1,1;64,4,3,1,1,2'
timeout 60 python3 bench/cuda_tiles_gemm_bench.py --out $OUT/r --rows 64 --shapes 0,3,4,5 --configs "$G" 2>&1 | tail -4 | cut -c1-260
wait; date
for pf in 0 2; do
  timeout 90 python3 -c "import sys; import zinc.backends.cuda.ops as o; o.TILES_PREFETCH = $pf; from zinc.cli import main; sys.exit(main(sys.argv[1:]))" \
    bench -m .real/q8b.gguf --backend cuda -p 0 -n 64 --parallel 64 -r 1 --json > $OUT/r/s43b_par64_pf$pf.json 2> /tmp/pf$pf.log
  echo "TILES_PREFETCH=$pf"; grep -E "verified|x64: run" /tmp/pf$pf.log | cut -c1-200
done
date
