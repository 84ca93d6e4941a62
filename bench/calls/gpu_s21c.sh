# Session 21: the L2 prefetch of the next matvec's weights. 1) bench/cuda_l2_prefetch.py (side-branch prefetch
# during norm_quantize chains: rates of bulk and per-line requests, µs of chain + matvec); 2) the backend's
# L2Prefetch (ops.PF_*): tg128 with it off and in three forms, fresh processes (cuda_tree_ab); 3) tg128 at depth
# 16384, off and on (zinc bench). Ran on the tree with bench/wip/l2-prefetch.patch applied (its ops.PF_* constants;
# the patch was then reverted: a loss everywhere).
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
timeout 200 python3 bench/cuda_l2_prefetch.py --out $OUT/r 2>&1 | grep -v -i warn | tail -60
wait
ab() { timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log; }
ab --label off1 --set PF_BYTES=0
ab --label bulk8M --set PF_BYTES=8388608 --set PF_PROGS=32 --set PF_CH=8192
ab --label lines8M --set PF_BYTES=8388608 --set PF_PROGS=32 --set PF_CH=128
ab --label bulk16M --set PF_BYTES=16777216 --set PF_PROGS=64 --set PF_CH=8192
ab --label off2 --set PF_BYTES=0
python3 - $OUT/r/ab <<'PY'
import json, sys, glob
rows = {json.load(open(f))["label"]: json.load(open(f)) for f in glob.glob(sys.argv[1] + "/tree-*.json")}
ref = rows.get("off1", {}).get("tokens")
for k, r in rows.items():
    print(f"{k:10} tokens equal to off1: {r['tokens'] == ref}")
PY
rm -f $OUT/r/ab/*.npz
for v in 0 8388608; do
  timeout 120 python3 -c "import sys; from zinc.backends.cuda import ops; ops.PF_BYTES=$v; from zinc.cli import main; sys.exit(main(['bench','-m','.real/q8b.gguf','--backend','cuda','-p','0','-n','128','-d','16384','-r','2','--json']))" > $OUT/r/deep-pf$v.json 2>>$OUT/r/err.log
  python3 -c "import json; d=json.load(open('$OUT/r/deep-pf$v.json')); print('PF_BYTES=$v', [(t['name'], round(t['tok_s'], 1)) for t in d['tests']])" 2>&1 | tail -1
done
tail -5 $OUT/r/err.log
tar czf $OUT/s21c.tgz -C $OUT r && rm -rf $OUT/r
