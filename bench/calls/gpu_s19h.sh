# Session 19: where the host's time goes in an engine decode on CUDA (316 tok/s against the greedy graph's 489):
# cProfile over the last of 3 requests (200 tokens each, the caches reused).
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1
timeout 150 python3 bench/cuda_engine_reuse.py .real/q8b.gguf --requests 3 --tokens 200 --profile --out $OUT/r/e > $OUT/r/prof.log 2>&1; grep -v -i warn $OUT/r/prof.log | grep -v "^$" | cut -c1-160 | tail -40
tar czf $OUT/s19h.tgz -C $OUT r && rm -rf $OUT/r
