# Session 45, call c (any card, ~8 min). (1) The batched decode attention's tiles (`kseqs.attention_seqs`: 1,182 of a
# 64-sequence Qwen3-8B step's 9,260 us at depth 128, session 44 H100, about a third of the K + V bytes' time) over
# cells a step, stages, warps and splits at depths 128 / 1024. (2) The norms' f16 copy for the tile GEMMs
# (`CudaOps._half_for_tiles`) off / on. (3) The plain weights' K-splits summed in the launch again (session 44: the
# step 0.12 ms slower): the serial tail raises the Q4_K tile GEMM from 96 to 100 registers, 5 -> 4 programs an SM
# (offline); with ptxas capped at 96 registers for Q4_K (`experts_gemm(maxnreg=)`), the tail's slices loaded in a
# loop (tmp/s45dyn, carried) or unrolled (src): 64-sequence step profiles, then the tiles bench at 64 rows for the
# same variants, 2 stages / an 80-register cap (6-7 programs an SM, spilling), the GLU pair capped at 128 (3 -> 4
# programs an SM, 72 bytes spilled). (4) zinc bench tg64 at 8 and 64 sequences (the f16 copy on, torch sums).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /tmp/synth.log 2>&1 &
timeout 150 python3 bench/cuda_seqs_attn_bench.py --depths 128,1024 --out $OUT/r 2>&1 | tail -30
wait
PATCH="import zinc.backends.cuda.ops as o, zinc.backends.cuda.kernels.moe as m; g = m.experts_gemm
def cap(*a, **k):
    if CAP and a[2] == 12 and k.get('sems') is not None and k.get('glu') is None: k['maxnreg'] = CAP
    return g(*a, **k)
m.experts_gemm = cap; o.SPLIT_SUMS_IN_LAUNCH = SUMS
if not HALF: o.CudaOps._half_for_tiles = lambda self, out: None"
prof() {  # $1 name, $2 src dir, $3 sums, $4 cap[, $5 the norms' f16 copy (default on)]
  PYTHONPATH=$PWD/$2 timeout 60 python3 -c "import sys, runpy; SUMS, CAP, HALF = $3, $4, ${5:-1}
$PATCH
sys.argv = ['p', '.real/q8b.gguf', '--seqs', '64', '--depth', '128', '--steps', '12', '--out', '$OUT/r']; runpy.run_path('bench/cuda_step_profile.py', run_name='__main__')" \
    2>&1 | grep -E "wall|experts_gemm|reduce_kernel<128|Error" | cut -c1-110
  mv $OUT/r/step-profile-x64-d128.json $OUT/r/step-profile-q8b-x64-$1.json
}
echo "== torch sums, no f16 norm copy"; prof sums0-nohalf src False 0 0
echo "== torch sums"; prof sums0 src False 0
echo "== in launch, loop"; prof sums1-loop tmp/s45dyn True 0
echo "== in launch, loop, Q4_K 96 registers"; prof sums1-loop-96 tmp/s45dyn True 96
echo "== in launch, unrolled, Q4_K 96 registers"; prof sums1-unroll-96 src True 96
for v in src; do
  C="64,4,3,0,8;64,4,3,0,8,1;64,4,3,0,8,1,96;64,4,2,0,8;64,4,2,0,8,0,80;64,4,3,0,8,0,80"
  PYTHONPATH=$PWD/$v timeout 120 python3 bench/cuda_tiles_gemm_bench.py --rows 64 --shapes 0,4 --out $OUT/r/t$(basename $v) \
    --configs "$C" > /dev/null 2>&1
  python3 -c "
import json
for r in json.load(open('$OUT/r/t$(basename $v)/tiles-gemm.json'))['rows']:
    if r['variant'].startswith('bm='): print('$(basename $v)', r['shape'][:7].ljust(7), r['type'], r['variant'][6:].ljust(48), '%7.1f' % r['us'])
"
done
PYTHONPATH=$PWD/src timeout 60 python3 bench/cuda_tiles_gemm_bench.py --rows 64 --shapes 3 --out $OUT/r/tglu \
  --configs "64,4,3,1,2,1;64,4,3,1,2,1,128" > /dev/null 2>&1
python3 -c "
import json
for r in json.load(open('$OUT/r/tglu/tiles-gemm.json'))['rows']:
    if r['variant'].startswith('bm='): print('glu', r['variant'][6:].ljust(48), '%7.1f' % r['us'])
"
timeout 100 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 64 --parallel 8,64 -r 1 --json \
  > $OUT/r/s45c-q8b.json 2> /tmp/s.log; grep -E "verified|: run|Error" /tmp/s.log | cut -c1-160
