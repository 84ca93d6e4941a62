# Session 22 (third call): the decode attention's leaner loop (masks per cell, one-token masks per cell, base-2
# softmax with the scale in the query, int32 tile offsets; the session-start rope order with the loads first),
# 2 splits under 256 cells. GPU attention tests; tg128 and tg128@16384 of this tree and the session-start one
# (.ab/old/src); zinc bench of this tree if time is left.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p $OUT/r .real
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 90 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_kernels.py tests/backends/test_cuda_rope.py -k "attention" 2>&1 | tail -2
wait
timeout 70 python3 bench/cuda_tree_ab.py .real/q8b.gguf --label new1 --depth 16384 --out $OUT/r/ab 2>>$OUT/r/err.log
PYTHONPATH=$PWD/.ab/old/src timeout 70 python3 bench/cuda_tree_ab.py .real/q8b.gguf --label old1 --depth 16384 --out $OUT/r/ab 2>>$OUT/r/err.log
python3 bench/cuda_tree_ab.py --compare $OUT/r/ab/tree-old1.npz $OUT/r/ab/tree-new1.npz
rm -f $OUT/r/ab/*.npz
tar czf $OUT/s22c.tgz -C $OUT r
timeout 60 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 512 -n 128 -r 3 --json > $OUT/r/bench.json 2> $OUT/r/bench.log
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['verify'].get('ok'), [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $OUT/r/bench.json || tail -3 $OUT/r/bench.log
tail -3 $OUT/r/err.log
tar czf $OUT/s22c.tgz -C $OUT r && rm -rf $OUT/r
