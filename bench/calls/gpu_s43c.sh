# Session 43, call c (any card, ~3.5 min): 2-16 sequences decoding together with their matmuls as 4-row matvecs
# (ops.MATVEC_SPLIT_MAX_ROWS 16) against the tile GEMM past 4 rows (4, the default): zinc bench tg64 of 2, 4, 8
# and 16 sequences each way (session 42 H100, tile GEMM: 1 sequence 462.9 tok/s, 8 together 671.3).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /tmp/synth.log 2>&1
date
for sp in 4 16; do
  timeout 100 python3 -c "import sys; import zinc.backends.cuda.ops as o; o.MATVEC_SPLIT_MAX_ROWS = $sp; from zinc.cli import main; sys.exit(main(sys.argv[1:]))" \
    bench -m .real/q8b.gguf --backend cuda -p 0 -n 64 --parallel 2,4,8,16 -r 1 --json > $OUT/r/s43c_split$sp.json 2> /tmp/sp$sp.log
  echo "MATVEC_SPLIT_MAX_ROWS=$sp"; grep -E "verified|: run" /tmp/sp$sp.log | cut -c1-200
done
date
