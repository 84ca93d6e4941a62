# Session 31, call i: qwen35-tiny Q8_0's near tie (reference margin 0.0546 at position 25) in check_families: the
# tree, the tree before this session (203fe37, tmp/b0), the tree with the models change only (68f5ea2, tmp/b1), and the
# tree with session 26's short-cache row (4 splits of 32 cells, pipelined).
. bench/calls/ab_env.sh
cf() { timeout 60 python3 -c "$1
from zinc.backends.cuda.check_families import main; main(['--out', '$OUT/r/$2', '--families', 'qwen35-tiny', '--ftypes', 'Q8_0'])" 2>&1 | grep -v Warn | grep "qwen35\|miss" | cut -c1-110; }
cf "" tree
PYTHONPATH=$PWD/tmp/b0/src cf "" b0
PYTHONPATH=$PWD/tmp/b1/src cf "" b1
cf "import zinc.backends.cuda.ops as o; o.ATTN_SPLITS[0] = (256, 4, 32)" row26
