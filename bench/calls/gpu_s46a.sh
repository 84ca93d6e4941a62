# Session 46, call a (any card, ~8 min; written at the end of session 45, then session 46's changes added: the K-splits'
# sums in one Triton launch each (`moe.split_sum`, session 45 H100: torch's 127 sums 684 us a step) and the GLU's and
# batched attention's (and Qwen3.5's gated norm's) outputs also stored in f16 for the down / output projections' tile
# GEMMs (72 conversions, 128 us).
# Session 45's last change, not yet on a GPU: the rope kernels read q, k and v where the fused projection left them
# (`elementwise.packed_rows`), so a 64-sequence Qwen3-8B step loses its two copies a layer (session 45 H100 profile: 90 `elementwise_kernel<128, 2>`
# launches, 161 us a step). GPU tests of the rope and batched attention kernels; the 64-sequence step profile
# (session 45 H100: 8.672 ms); zinc bench tg64 at 1, 8, 16, 64 sequences (session 45 H100: 460.5 / 1,287.4 / 2,531.6 /
# 7,535.1); the batched conv + delta rule over `DELTA_SEQS` configurations (bench/cuda_delta_seqs_bench.py: session 43
# H100, 129 us a layer at 64 sequences); the Qwen3.5-35B-A3B 64-sequence step (session 43 H100: 22.358 ms).
# Also not yet on a GPU: the batched kernels told that the table's cell and state addresses are 16-byte aligned
# (sm_90 offline: the batched attention's K/V copies 16 bytes, not 4; the delta rule 109 -> 56 registers).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /tmp/synth8.log 2>&1 &
P8=$!
python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > /tmp/synth35.log 2>&1 &
P35=$!
timeout 180 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE tests/backends/test_cuda_rope.py \
  tests/backends/test_cuda_experts_gemm.py tests/backends/test_cuda_seqs.py tests/backends/test_cuda_kernels.py \
  tests/backends/test_cuda_recurrent.py -k "rope or seqs or experts or split_sum or glu_half or tiles_gemm or half or kv_tables \
  or gated" > $OUT/r/t_a.log 2>&1
echo "== tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed|Fatal" $OUT/r/t_a.log | head -12 | cut -c1-300
wait $P8
timeout 60 python3 bench/cuda_step_profile.py .real/q8b.gguf --seqs 64 --depth 128 --steps 12 --out $OUT/r 2>&1 \
  | grep -v Warn | head -24 | cut -c1-110
timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 64 --parallel 8,16,64 -r 1 --json \
  > $OUT/r/s46a-q8b.json 2> /tmp/s.log; grep -E "verified|: run|Error" /tmp/s.log | cut -c1-160
timeout 60 python3 bench/cuda_delta_seqs_bench.py --out $OUT/r 2>&1 | grep -v Warn
wait $P35
timeout 90 python3 bench/cuda_step_profile.py .real/q35.gguf --seqs 64 --depth 128 --steps 8 --out $OUT/r 2>&1 \
  | grep -v Warn | head -26 | cut -c1-110
