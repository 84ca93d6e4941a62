# Session 19: is the slow state torch's doing or the driver's: graphs captured by libcuda with torch unaware (raw),
# after 8 empty graph objects (cuGraphCreate), and every capture into one graph object emptied between (into).
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p $OUT/r
run() { timeout 60 python3 bench/cuda_graph_inst.py --out $OUT/r/i "$@" > $OUT/r/grow.log 2>&1; echo "== $*"; grep -v -i warn $OUT/r/grow.log | tail -${T:-7} | cut -c1-150; }
T=7 run --grow raw --graphs 6
T=5 run --grow raw --graphs 4 --empty 8
T=7 run --grow into --graphs 6
tar czf $OUT/s19e.tgz -C $OUT r && rm -rf $OUT/r
