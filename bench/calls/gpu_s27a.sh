# Session 27, call a: head-major KV cells (`ops.KV_HEAD_MAJOR`). First the cache kernels' tests with both layouts
# on the GPU, then bench/cuda_attn_layout.py (the split + combine launches, a loads-only shadow and a plain stream,
# each layout, at 4,224 and 16,512 cells), then the decode A/B in fresh processes (`cuda_tree_ab.py --set
# KV_HEAD_MAJOR=True` against the default) at depth 16384, 4096 and tg128, and `zinc bench` pp512 each way (the prefill
# flash kernel reads the same cells). Ran in session 27 on an H100 with the head-major code then in the tree (now
# bench/wip/kv-head-major.patch: apply it to run this again).
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
[ -f .real/q8b.gguf ] || python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1 &
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/backends/test_kv_q8.py tests/backends/test_cuda_ops_more.py \
  tests/backends/test_cuda_kernels.py -k "head or layouts" 2>&1 | tail -3
timeout 120 python3 bench/cuda_attn_layout.py --out $OUT/r 2>>$OUT/r/err.log
wait
ab() { timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log | cut -c1-80; }
ab --label d16cm --depth 16384
ab --label d16hm --depth 16384 --set KV_HEAD_MAJOR=True
ab --label d4hm --depth 4096 --set KV_HEAD_MAJOR=True
ab --label d4cm --depth 4096
ab --label tcm
ab --label thm --set KV_HEAD_MAJOR=True
rm -f $OUT/r/ab/*.npz
pp() { timeout 60 python3 -c "import sys, zinc.backends.cuda.ops as o; o.KV_HEAD_MAJOR = $1; from zinc.cli import main; sys.exit(main(sys.argv[1:]))" bench -m .real/q8b.gguf --backend cuda -p 512 -n 0 -r 3 --json > $OUT/r/pp-$1.json 2>>$OUT/r/err.log; python3 -c "import json; d=json.load(open('$OUT/r/pp-$1.json')); print('head-major $1', [(t['name'], round(t['tok_s'])) for t in d['tests']])"; }
pp False
pp True
tail -5 $OUT/r/err.log
