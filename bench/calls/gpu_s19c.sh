# Session 19: graphs instantiated one at a time, every one so far timed after each (torch's way, keep_graph,
# libcuda's instantiate with flags 0/1/2, with an upload), then the 4th on destroyed; cuda_graph_update.py with the
# recycling class fixed (s19b: torch's binding reads keep_graph in __init__).
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
for g in torch keep flags:0 flags:1 flags:2 flags:1+upload; do
  timeout 60 python3 bench/cuda_graph_inst.py --grow $g --out $OUT/r/i > $OUT/r/grow.log 2>&1; grep -v -i warn $OUT/r/grow.log | tail -9
done
wait
timeout 120 python3 bench/cuda_graph_update.py .real/q8b.gguf --out $OUT/r/u > $OUT/r/upd.log 2>&1; grep -v -i warn $OUT/r/upd.log | grep -v "^zinc: load" | tail -14
tar czf $OUT/s19c.tgz -C $OUT r && rm -rf $OUT/r
