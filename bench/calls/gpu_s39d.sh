# Session 39, call d (any card; the last ~4 minutes of device time): the batched-decode GPU tests while the
# synthetic Qwen3-8B Q4_K_M is written, then zinc bench tg128 of 64 sequences decoding together (2 runs).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1 &
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_seqs.py tests/backends/test_cuda_graph.py \
  -k "seqs" 2>&1 | tail -6
wait; date
timeout 100 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 --parallel 64 -r 2 --json \
  > $OUT/r/s39_par64.json 2> $OUT/r/s39_par64.log
tail -6 $OUT/r/s39_par64.log
