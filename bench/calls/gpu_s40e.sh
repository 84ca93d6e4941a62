# Session 40, call e (any card; the last ~3 minutes of device time): the synthetic Qwen3-8B Q4_K_M, then zinc bench
# tg32 of 64 sequences decoding together (one run; verify_seqs checks the batched step first).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1
timeout 100 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 32 --parallel 64 -r 1 --json \
  > $OUT/r/s40_par64.json 2> $OUT/r/s40_par64.log
tail -8 $OUT/r/s40_par64.log | cut -c1-300
