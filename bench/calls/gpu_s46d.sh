# Session 46, call d (any card, ~5 min): call a cut to what a short device budget allows. GPU tests of the kernels
# changed since session 45's last device call (`moe.split_sum`, the f16 copies of the GLU, the batched attention and
# the gated norm, the strided rope reads); the 64-sequence Qwen3-8B step profile (session 45 H100: 8.672 ms, torch's
# split sums 684 us, conversions 128 us, copies 161 us); zinc bench tg64 of 64 sequences (session 45 H100: 7,535.1).
# Also not yet on a GPU: the batched kernels told that the table's cell and state addresses are 16-byte aligned
# (sm_90 offline: the batched attention's K/V copies 16 bytes, not 4; the delta rule 109 -> 56 registers).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /tmp/synth8.log 2>&1 &
timeout 130 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE tests/backends/test_cuda_rope.py \
  tests/backends/test_cuda_seqs.py tests/backends/test_cuda_kernels.py tests/backends/test_cuda_recurrent.py \
  -k "rope or seqs or split_sum or half or tiles_gemm or gated or kv_tables" > $OUT/r/t_d.log 2>&1
echo "== tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed|Fatal" $OUT/r/t_d.log | head -12 | cut -c1-300
wait
timeout 60 python3 bench/cuda_step_profile.py .real/q8b.gguf --seqs 64 --depth 128 --steps 12 --out $OUT/r 2>&1 \
  | grep -v Warn | head -24 | cut -c1-110
timeout 100 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 64 --parallel 64 -r 1 --json \
  > $OUT/r/s46d-q8b.json 2> /tmp/s.log; grep -E "verified|: run|Error" /tmp/s.log | cut -c1-160
