# Session 44, call a (any card, up to ~9 min). Three tile GEMM changes built without a GPU:
# 1. each step's Q4_K scale fields loaded as 4-byte words (`moe.tile_parts`, session 43), so Triton's pipeline copies
#    them ahead (offline SASS: no synchronous global load left in the loop); the same products; in all three configs;
# 2. Q4_K and Q6_K tiles to f16 by PTX (Q6_K: offline SASS 539 -> 301 loop instructions); (`quant.nibbles_f16`: 4 bytes -> 8 exact f16 in 10 instructions; offline
#    sm_90 SASS: GLU loop 314 -> 267 instructions, 64-column 290 -> 243), A/B by moe.NIBBLE_ASM;
# 3. the K-splits summed inside the launch by each tile's last split (ops.SPLIT_SUMS_IN_LAUNCH, off until measured).
# Configs: base (asm off, sums off), asm, asm+sums. GPU tests of the tile GEMM and the nibbles; a 64-sequence Qwen3-8B
# step's kernels (session 43, H100, before all three: 10.908 ms, tile GEMM 8,224 us, torch sums 704 us); Qwen3.5-35B-A3B
# 64-sequence step (s43 H100: 22.358 ms); zinc bench tg64 at 8 and 64 sequences, base and asm+sums (s43 H100: 958.4 /
# 5,912.1 tok/s).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q; python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q) > /tmp/synth.log 2>&1 &
date
timeout 120 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE tests/backends/test_cuda_kernels.py \
  tests/backends/test_cuda_experts_gemm.py -k "tiles_gemm or experts_gemm or nibbles or six_bits" > $OUT/r/t_a.log 2>&1
echo "== tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed|Fatal" $OUT/r/t_a.log | head -20 | cut -c1-300
wait; date
set_() { echo "import zinc.backends.cuda.ops as o, zinc.backends.cuda.kernels.moe as m; m.NIBBLE_ASM = $1; o.SPLIT_SUMS_IN_LAUNCH = $2"; }
for cfg in "False False" "True False" "True True"; do
  set -- $cfg; echo "== NIBBLE_ASM=$1 SPLIT_SUMS_IN_LAUNCH=$2"
  timeout 60 python3 -c "import sys, runpy; $(set_ $1 $2); sys.argv = ['p', '.real/q8b.gguf', '--seqs', '64', '--depth', '128', '--steps', '16', '--out', '$OUT/r']; runpy.run_path('bench/cuda_step_profile.py', run_name='__main__')" \
    2>&1 | grep -E "wall|experts_gemm|reduce|Error" | cut -c1-110
  mv $OUT/r/step-profile-x64-d128.json $OUT/r/step-profile-q8b-x64-asm$1-sums$2.json
done
for a in True; do
  timeout 70 python3 -c "import sys, runpy; $(set_ $a False); sys.argv = ['p', '.real/q35.gguf', '--seqs', '64', '--depth', '128', '--steps', '8', '--out', '$OUT/r']; runpy.run_path('bench/cuda_step_profile.py', run_name='__main__')" \
    2>&1 | grep -E "wall|mmv|experts_gemm|delta|Error" | cut -c1-110
  mv $OUT/r/step-profile-x64-d128.json $OUT/r/step-profile-q35-x64-asm$a.json
done
for cfg in "False False" "True True"; do
  set -- $cfg
  timeout 100 python3 -c "import sys; $(set_ $1 $2); from zinc.cli import main; sys.exit(main(sys.argv[1:]))" \
    bench -m .real/q8b.gguf --backend cuda -p 0 -n 64 --parallel 8,64 -r 1 --json > $OUT/r/s44a_asm$1_sums$2.json 2> /tmp/s.log
  echo "NIBBLE_ASM=$1 SPLIT_SUMS_IN_LAUNCH=$2"; grep -E "verified|: run|Error" /tmp/s.log | cut -c1-200
done
date
# the rest only while the call has time left (the tiles grids of call c, shortened)
if [ $SECONDS -lt 400 ]; then
  timeout $((530 - SECONDS)) python3 bench/cuda_tiles_gemm_bench.py --rows 64 --shapes 0,3 --out $OUT/r \
    --configs "64,4,3,0,8;64,4,3,0,8,1,1;64,4,3,0,8,2;128,8,3,0,16;128,8,3,0,16,1,1;128,4,3,1,16;32,4,3,0,1;32,4,3,0,2,1,1;32,4,3,0,4,1,1;64,4,3,0,2,1,1;128,8,3,0,4,1,1;64,4,3,1,2,1,1" 2>&1 | tail -3
  python3 -c "
import json, sys
for r in sorted(json.load(open('$OUT/r/tiles-gemm.json'))['rows'], key=lambda r: (r['shape'], r['us'])):
    print(f\"{r['shape']:8} {r['type']:5} {r['variant'][:60]:60} {r['us']:8.1f} us  err {r['rel_err']:.1e}\")"
fi
date
