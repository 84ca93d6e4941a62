# Session 44, call c (any card, ~8 min): the tile GEMM at 64 rows: plain weights Q / O (Q4_K 4096 x 4096) and down (Q6_K
# 4096 x 12288) (session 43 H100: 31.4 and 82.5 us at 64 columns in 8 splits): 128 and 256 columns in more K-splits
# (x tile traffic N / columns x 512 KB), two 64-value steps a loop iteration (6th field), splits summed in the launch
# (7th field); and gate + up (session 43 H100: 113.7 us at 32 columns) wider, K split, summed and activated in the
# launch (7th field).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 330 python3 bench/cuda_tiles_gemm_bench.py --rows 64 --shapes 0,4 --out $OUT/r \
  --configs "64,4,3,0,8;64,4,3,0,8,1,1;64,4,4,0,8;64,8,3,0,8;64,4,3,1,8;64,4,3,0,16;64,4,3,0,16,1,1;64,4,3,0,8,2;64,4,2,0,8,2;64,4,3,0,8,2,1;64,4,3,1,8,2;128,4,3,0,16;128,8,3,0,16;128,8,3,0,8;128,4,3,1,16;128,8,3,1,16;128,8,3,0,16,1,1;128,8,3,0,16,2,1;256,8,3,0,16;256,8,3,0,16,1,1" 2>&1 | tail -6
timeout 200 python3 bench/cuda_tiles_gemm_bench.py --rows 64 --shapes 3 --out $OUT/r/glu \
  --configs "32,4,3,0,1;64,4,3,1,1;64,4,3,0,1;32,4,3,0,2,1,1;64,4,3,1,2,1,1;64,4,3,0,2,1,1;64,4,3,1,4,1,1;128,8,3,0,4,1,1;128,4,3,1,4,1,1;128,8,3,1,2,1,1" 2>&1 | tail -3
python3 - $OUT/r/tiles-gemm.json $OUT/r/glu/tiles-gemm.json <<'PY'
import json, sys
for r in sorted(sum((json.load(open(f))["rows"] for f in sys.argv[1:]), []), key=lambda r: (r["shape"], r["us"])):
    print(f"{r['shape']:8} {r['type']:5} {r['variant'][:60]:60} {r['us']:8.1f} us  err {r['rel_err']:.1e}")
PY
