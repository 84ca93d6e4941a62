# Session 45, call f (any card, ~4 min): the session's changes together (the norms' f16 copy for the tile GEMMs, 32
# cells a step of the batched attention, Q / O and the stacked Q and K swapped in 4 K-splits at 33-64 rows): the GPU
# tests of the batched attention, the tile GEMM and the norms; zinc bench tg64 of Qwen3-8B at 1, 8, 16 and 64 sequences
# (session 44 H100: 461.1 / 1,277.3 / - / 7,078.4).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /tmp/synth.log 2>&1 &
timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE tests/backends/test_cuda_seqs.py \
  tests/backends/test_cuda_kernels.py -k "seqs or attention_seqs or tiles or norm or gemm" > $OUT/r/t_f.log 2>&1
echo "== tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed|Fatal" $OUT/r/t_f.log | head -12 | cut -c1-300
wait
timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 64 --parallel 8,16,64 -r 1 --json \
  > $OUT/r/s45f-q8b.json 2> /tmp/s.log; grep -E "verified|: run|Error" /tmp/s.log | cut -c1-160
