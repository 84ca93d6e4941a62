# Session 18: six decode graphs on six caches, each timed when new and again at the end (bench/cuda_graph_count.py).
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1
timeout 150 python3 bench/cuda_graph_count.py --graphs 0 --model .real/q8b.gguf --out $OUT/r/m 2>&1 | grep -v -i warn | grep -v "^zinc" | tail -12
tar czf $OUT/s18e.tgz -C $OUT r && rm -rf $OUT/r
