# Session 45, call b (any card, ~7 min): the tile GEMM's first step peeled out of its loop (`kmoe._step`), so ptxas
# keeps the swapped form's wgmma in flight while the next step's tile is made (offline sm_90 SASS: waits of 3 pending
# groups, not 0; the GLU pair stays serialized). GPU tests of the tile GEMM with the peel; the tiles bench at 64 rows,
# session 44's code (tmp/s45base, carried) against the peel, plain weights unswapped (today's) and swapped; the
# 64-sequence Qwen3-8B step with the plain weights swapped (`ops.tiles_shape` patched) against today's shapes.
export PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
PYTHONPATH=$PWD/src python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /tmp/synth.log 2>&1 &
PYTHONPATH=$PWD/src timeout 120 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE \
  tests/backends/test_cuda_kernels.py tests/backends/test_cuda_experts_gemm.py -k "gemm or glu_split" > $OUT/r/t_b.log 2>&1
echo "== tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed|Fatal" $OUT/r/t_b.log | head -12 | cut -c1-300
CFG="64,4,3,0,8;64,4,3,1,8;64,4,3,1,4;64,4,3,1,2,1;32,4,3,0,2,1"
for v in base peel; do
  P=$PWD/src; [ $v = base ] && P=$PWD/tmp/s45base
  PYTHONPATH=$P timeout 150 python3 bench/cuda_tiles_gemm_bench.py --rows 64 --shapes 0,1,2,3,4 --out $OUT/r/$v \
    --configs "$CFG" > $OUT/r/tiles_$v.log 2>&1
  python3 -c "
import json, sys
for r in json.load(open('$OUT/r/$v/tiles-gemm.json'))['rows']:
    if r['variant'].startswith('bm='): print('$v', r['shape'][:7].ljust(7), r['type'], r['variant'][6:].ljust(40), '%7.1f' % r['us'], '%.0e' % r['rel_err'])
"
done
wait
prof() {  # $1: name, $2: python run before the profile
  timeout 60 python3 -c "import sys, runpy; $2; sys.argv = ['p', '.real/q8b.gguf', '--seqs', '64', '--depth', '128', '--steps', '12', '--out', '$OUT/r']; runpy.run_path('bench/cuda_step_profile.py', run_name='__main__')" \
    2>&1 | grep -E "wall|experts_gemm|reduce|Error" | cut -c1-110
  mv $OUT/r/step-profile-x64-d128.json $OUT/r/step-profile-q8b-x64-$1.json
}
export PYTHONPATH=$PWD/src
echo "== peel, today's shapes"; prof peel "pass"
echo "== peel, plain weights swapped"
prof peel-swap "import zinc.backends.cuda.ops as o; f = o.tiles_shape; o.tiles_shape = lambda n, k, r, g: f(n, k, r, g) if g else (64, 8, True)"
