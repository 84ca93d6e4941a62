# Session 23 (second call): the residual add + RMS norm inside the matvec before them, its warps' loops now unrolled
# as mmvs's (bench/cuda_resnorm.py: checks, producer configurations, producer -> consumer chains); GPU tests of the
# matvecs and the graph decode (qwen3-tiny Q4_K_M takes the fused path); tg128 with RESNORM on and off, fresh processes.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p $OUT/r .real
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 200 python3 bench/cuda_resnorm.py --out $OUT/r 2>&1 | grep -v '"check"' | grep -v '"T": 3' | tail -14
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_mmvq.py tests/backends/test_cuda_graph.py -k "pair or graph_decode or greedy" 2>&1 | tail -3
wait
for i in 1 2; do
timeout 80 python3 bench/cuda_tree_ab.py .real/q8b.gguf --label on$i --out $OUT/r/ab 2>>$OUT/r/err.log
timeout 80 python3 bench/cuda_tree_ab.py .real/q8b.gguf --label off$i --set RESNORM=False --out $OUT/r/ab 2>>$OUT/r/err.log
done
python3 bench/cuda_tree_ab.py --compare $OUT/r/ab/tree-off1.npz $OUT/r/ab/tree-on1.npz
rm -f $OUT/r/ab/*.npz
tail -3 $OUT/r/err.log
