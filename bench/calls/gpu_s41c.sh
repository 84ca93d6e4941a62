# Session 41, call c (any card; ~3 minutes): the GPU-only tests of sessions 39-41 (group graphs, greedy and sampled
# loops on the device, chunks followed before they are read) while the synthetic Qwen3-8B Q4_K_M is written; zinc
# bench tg32 of 64 sequences decoding together (anchor 4,289 tok/s); one request's decode, sampled / greedy.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1 &
timeout 75 python3 -m pytest -q -x -p no:cacheprovider tests/backends/test_cuda_graph.py tests/backends/test_cuda_kernels.py \
  tests/backends/test_cuda_seqs.py -k "sample or follow or greedy_seqs_graphs or forward_seqs_graphs" > $OUT/r/tests.log 2>&1
tail -8 $OUT/r/tests.log | cut -c1-300
wait; date
timeout 70 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 32 --parallel 64 -r 1 --json \
  > $OUT/r/s41_par64.json 2> $OUT/r/s41_par64.log
tail -5 $OUT/r/s41_par64.log | cut -c1-300
date
timeout 45 python3 bench/sampled_decode.py .real/q8b.gguf -n 64 --seqs 1 --reps 1 2>&1 | tail -7
date
