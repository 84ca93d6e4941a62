# Session 41, call d (any card; ~2.5 minutes): the device sampler's and the chained loops' GPU tests, the group
# graphs' while the synthetic Qwen3-8B Q4_K_M is written; zinc bench tg32 of 64 sequences decoding together.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1 &
timeout 70 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_graph.py tests/backends/test_cuda_kernels.py \
  -k "sample or follow or greedy_seqs_graphs" > $OUT/r/tests.log 2>&1
tail -8 $OUT/r/tests.log | cut -c1-300
wait; date
timeout 60 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 32 --parallel 64 -r 1 --json \
  > $OUT/r/s41_par64.json 2> $OUT/r/s41_par64.log
tail -5 $OUT/r/s41_par64.log | cut -c1-300
date
