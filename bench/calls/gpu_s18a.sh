# Prepared in session 17 for the next one (not run yet). (1) The graph tests after graph.py's change (a capture's
# eager run takes the capture's paths); (2) q8_matvec's second form (sums after the loop) against mmvq; if it is as
# fast, decode can take it (qwen35-tiny Q8_0's argmax miss); (3) which prompt kernel leaves the decode slow
# (bench/cuda_tg_trigger.py: prompts of growing length, tg128 after each, the kernels each prompt launched first),
# Qwen3-8B and Qwen3.5.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1;
 python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q >> $OUT/r/synth.log 2>&1) &
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_graph.py -rf --tb=short 2>&1 | tail -4
timeout 160 python3 bench/cuda_q8f_bench.py --out $OUT/r 2>&1 | grep -v -i warn | tail -18
while pgrep -f zinc.synth > /dev/null; do sleep 2; done
timeout 150 python3 bench/cuda_tg_trigger.py .real/q8b.gguf --out $OUT/r/q8b 2>&1 | grep -v -i warn | tail -16
timeout 150 python3 bench/cuda_tg_trigger.py .real/q35.gguf --lengths 512,2048 --out $OUT/r/q35 2>&1 | grep -v -i warn | tail -10
tar czf $OUT/s18a.tgz -C $OUT r && rm -rf $OUT/r
