# Session 40, call c (any card; call a cut to ~5 minutes of device time): the batched-decode and top-logits GPU
# tests while the synthetic Qwen3-8B Q4_K_M is written; zinc bench tg64 of 64 sequences decoding together (the
# anchor: 4,289 tok/s at 64); a request's decode with default sampling, best logits vs whole rows.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1 &
timeout 110 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_seqs.py tests/backends/test_cuda_graph.py \
  tests/backends/test_cuda_kernels.py -k "seqs or top_logits" > $OUT/r/tests.log 2>&1
tail -12 $OUT/r/tests.log | cut -c1-300
wait; date
timeout 120 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 64 --parallel 64 -r 2 --json \
  > $OUT/r/s40_par64.json 2> $OUT/r/s40_par64.log
tail -6 $OUT/r/s40_par64.log | cut -c1-300
date
timeout 70 python3 bench/sampled_decode.py .real/q8b.gguf -n 64 --seqs 1 --reps 2 2>&1 | tail -5
date
