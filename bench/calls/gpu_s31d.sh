# Session 31, call d: the step's end in fewer launches (the last layer's residual add with the output norm, one
# add_rms_norm; the greedy pick's two launches as programmatic dependent launches) and the deep row of 16 splits of
# 64 cells: GPU tests of the graph file and the greedy kernels, decode-step A/B pairs against the previous commit's
# tree (carried in tmp/base/src) and with GREEDY_PDL off; on an H200 also `zinc bench` and the deep row against 16 of 128.
export AB_TIMEOUT=60
. bench/calls/ab_env.sh
timeout 150 python3 -m pytest -q -x -p no:cacheprovider tests/backends/test_cuda_graph.py 2>&1 | tail -1
timeout 100 python3 -m pytest -q -x -p no:cacheprovider tests/backends/test_cuda_kernels.py -k "greedy or argmax" 2>&1 | tail -1
base() { PYTHONPATH=$PWD/tmp/base/src ab "$@"; }
base --label base1
ab --label new1
base --label base2
ab --label new2
ab --label nogpdl --set GREEDY_PDL=False
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 512 -n 128 -r 3 --json > $OUT/r/bench.json 2> $OUT/r/bench.log; pp $OUT/r/bench.json
  ab --label d16k --depth 16384
  ab --label d16k128 --depth 16384 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64),(8192,16,64),($L,16,128)]"
  timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 16384 -r 3 --json > $OUT/r/deep.json 2> $OUT/r/deep.log; pp $OUT/r/deep.json
fi
rm -f $OUT/r/ab/*.npz
