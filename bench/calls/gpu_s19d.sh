# Session 19: what counts towards the slow state: graphs of 100 / 1,200 nodes (a size in bytes or a count?), and 3 or
# 8 graphs of one node captured first (does a small graph count as one?).
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p $OUT/r
run() { timeout 60 python3 bench/cuda_graph_inst.py --grow torch --out $OUT/r/i "$@" > $OUT/r/grow.log 2>&1; echo "== $*"; grep -v -i warn $OUT/r/grow.log | tail -${T:-7} | cut -c1-150; }
T=11 run --nodes 100 --graphs 10
T=6 run --nodes 1200 --graphs 5
T=5 run --pre 3 --graphs 4
T=5 run --pre 8 --graphs 4
T=5 run --pre 2 --graphs 4
tar czf $OUT/s19d.tgz -C $OUT r && rm -rf $OUT/r
