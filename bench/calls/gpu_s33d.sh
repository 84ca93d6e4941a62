# Session 33, call d: the card's peak bandwidth as `ops.peak_bandwidth` reads it (an H200's deep decode attention
# takes ATTN_SPLITS_WIDE: 16 splits of 128 cells past 8,192), the GPU tests that set the split rows, and `zinc bench`
# of the tree at depth 16,384 (and 4,096, whose row is the same on both cards).
export AB_TIMEOUT=60
. bench/calls/ab_env.sh
python3 -c "
import torch; from zinc.backends.cuda import ops
d = torch.device('cuda'); print('peak bandwidth', ops.peak_bandwidth(d) / 1e12, 'TB/s; wide', ops.peak_bandwidth(d) >= ops.WIDE_BANDWIDTH)"
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_rope.py tests/backends/test_kv_q8.py 2>&1 | tail -2
zb deep -p 0 -n 128 -d 16384
zb d4k -p 0 -n 128 -d 4096
