# Session 31, call j: qwen35-tiny Q8_0 in check_families with 4 splits of 32 cells unrolled under 256 cells (the same
# split boundaries as session 26's pipelined row), and tg128 A/B pairs: 8 of 16 unrolled (the tree) against 4 of 32
# unrolled.
export AB_TIMEOUT=60
. bench/calls/ab_env.sh
cf() { timeout 60 python3 -c "$1
from zinc.backends.cuda.check_families import main; main(['--out', '$OUT/r/$2', '--families', 'qwen35-tiny', '--ftypes', 'Q8_0'])" 2>&1 | grep -v Warn | grep "qwen35\|miss" | cut -c1-110; }
cf "import zinc.backends.cuda.ops as o; o.ATTN_SPLITS[0] = (256, 4, 32, 0)" u4x32
ab --label t8x16
ab --label t4x32 --set "ATTN_SPLITS=[(256,4,32,0),(2048,16,64),(8192,16,64),($L,16,64,3)]"
ab --label t8x16b
ab --label t4x32b --set "ATTN_SPLITS=[(256,4,32,0),(2048,16,64),(8192,16,64),($L,16,64,3)]"
rm -f $OUT/r/ab/*.npz
