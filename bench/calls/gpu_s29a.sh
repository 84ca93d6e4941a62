# Session 29, call a: session 28's TMA split loop (ops.ATTN_TMA) against the plain loop, for the least device time:
# the kernel rows at 16,512 cells (cuda_attn_swab.py --tiny), two decode-step A/B pairs at depth 16384 (each run also
# times tg128 on a 128-cell cache; logits compared), `zinc bench` at depth with TMA on where it won (H200 only), and
# the GPU tests of both forms.
# Needs `git apply bench/wip/attn-tma-swab.patch` first: the TMA form left the backend after session 29's kernel rows.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$GPU"
[ -f .real/q8b.gguf ] || python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1 &
timeout 100 python3 bench/cuda_attn_swab.py --tiny --out $OUT/r 2>&1 | grep -v Warning | tail -12
wait
ab() { timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log | cut -c1-110; }
ab --label d0 --depth 16384
ab --label dtma --depth 16384 --set ATTN_TMA=True
python3 bench/cuda_tree_ab.py --compare $OUT/r/ab/tree-d0.npz $OUT/r/ab/tree-dtma.npz 2>&1 | tail -8
ab --label d0b --depth 16384
ab --label dtmab --depth 16384 --set ATTN_TMA=True
rm -f $OUT/r/ab/*.npz
WIN=$(python3 -c "
import json, statistics as s
r = lambda n: s.mean(json.load(open('$OUT/r/ab/tree-' + n + '.json'))['tok_s_depth'])
try: print(int(r('dtma') + r('dtmab') > 1.01 * (r('d0') + r('d0b'))))
except Exception: print(0)")
echo "TMA wins at depth: $WIN"
if [ "$WIN" = 1 ] && echo "$GPU" | grep -q H200; then
  mkdir -p .snap/tma && cp -r src .snap/tma/ && sed -i 's/^ATTN_TMA = False/ATTN_TMA = True/' .snap/tma/src/zinc/backends/cuda/ops.py
  PYTHONPATH=$PWD/.snap/tma/src timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 0,16384 -r 3 --json > $OUT/r/deep-tma.json 2> $OUT/r/deep-tma.log
  python3 -c "import json; d=json.load(open('$OUT/r/deep-tma.json')); print(d['device'], d['verify']['ok'], [(t['name'], round(t['tok_s'], 1)) for t in d['tests']])"
fi
timeout 90 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_kernels.py tests/backends/test_cuda_rope.py -k "tma or test_attention or rope_qk_attention" 2>&1 | tail -3
