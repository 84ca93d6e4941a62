# Session 41, call b (any card; call a cut to ~4 minutes of device time, SHORT=1: ~2.5): the GPU-only tests of
# sessions 39-41 (group graphs, greedy and sampled loops on the device, chunks followed before they are read) while
# the synthetic Qwen3-8B Q4_K_M is written; zinc bench tg64 (SHORT: tg32) of 64 sequences decoding together
# (anchor 4,289 tok/s); unless SHORT, one request's decode with default sampling drawn on the device vs the host.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
if [ -n "$SHORT" ]; then T_TESTS=70 T_BENCH=60 N=32 R=1; else T_TESTS=100 T_BENCH=100 N=64 R=2; fi
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1 &
timeout $T_TESTS python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_seqs.py \
  tests/backends/test_cuda_graph.py tests/backends/test_cuda_kernels.py \
  -k "graphs or graph_replay or sample or follow" > $OUT/r/tests.log 2>&1
tail -12 $OUT/r/tests.log | cut -c1-300
wait; date
timeout $T_BENCH python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 \
  -n $N --parallel 64 -r $R --json \
  > $OUT/r/s41_par64.json 2> $OUT/r/s41_par64.log
tail -6 $OUT/r/s41_par64.log | cut -c1-300
date
[ -n "$SHORT" ] || timeout 60 python3 bench/sampled_decode.py .real/q8b.gguf -n 64 --seqs 1 --reps 2 2>&1 | tail -8
date
