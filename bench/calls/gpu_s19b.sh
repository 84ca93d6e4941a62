# (bench/cuda_graph_update.py, run here and in s19c, was removed afterwards: an exec update needs a torch capture, which already brings the slow state; see RESULTS, session 19.)
# Session 19: (1) the 4th graph captured or the 4th instantiated, and an executable updated in place with other
# captures (bench/cuda_graph_inst.py); (2) cuda_graph_update.py again, its whole output kept (s19a's stopped: no
# greedy graph for the 4th cache).
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
timeout 90 python3 bench/cuda_graph_inst.py --out $OUT/r/i > $OUT/r/inst.log 2>&1; grep -v -i warn $OUT/r/inst.log | tail -14
wait
timeout 120 python3 bench/cuda_graph_update.py .real/q8b.gguf --out $OUT/r/u > $OUT/r/upd.log 2>&1; grep -v -i warn $OUT/r/upd.log | grep -v "^zinc: load" | tail -14
tar czf $OUT/s19b.tgz -C $OUT r && rm -rf $OUT/r
