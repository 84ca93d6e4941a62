# Session 44, call a (any card, ~6 min). Two tile GEMM changes of session 43 built after its GPU time ran out:
# 1. each step's Q4_K scale fields loaded as 4-byte words (`moe.tile_parts`), so Triton's pipeline copies them ahead
#    (offline SASS: no synchronous global load left in the loop); bit for bit the same products, on by default;
# 2. the K-splits summed inside the launch by each tile's last split (ops.SPLIT_SUMS_IN_LAUNCH, off until measured).
# The GPU tests of the tile GEMM; a 64-sequence Qwen3-8B step's kernels with 2 off and on (session 43, H100, before
# both: 10.908 ms, tile GEMM 8,224 us, torch sums 704 us); zinc bench tg64 of 8, 16, 64 sequences both ways (session 43
# H100: 958.4 / 1,889.3 / 5,912.1 tok/s); Qwen3.5-35B-A3B's 64-sequence step (session 43 H100: 22.358 ms, tile GEMM
# 3,306 us). On an H200 these are its first 64-sequence numbers: the same before-numbers need an H100.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q; python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q) > /tmp/synth.log 2>&1 &
date
timeout 100 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE tests/backends/test_cuda_kernels.py \
  tests/backends/test_cuda_experts_gemm.py -k "tiles_gemm or experts_gemm" > $OUT/r/t_a.log 2>&1
echo "== tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed|Fatal" $OUT/r/t_a.log | head -20 | cut -c1-300
wait; date
for on in False True; do
  timeout 60 python3 -c "import sys, runpy; import zinc.backends.cuda.ops as o; o.SPLIT_SUMS_IN_LAUNCH = $on; sys.argv = ['p', '.real/q8b.gguf', '--seqs', '64', '--depth', '128', '--steps', '16', '--out', '$OUT/r']; runpy.run_path('bench/cuda_step_profile.py', run_name='__main__')" \
    2>&1 | grep -E "wall|experts_gemm|reduce" | cut -c1-110
  mv $OUT/r/step-profile-x64-d128.json $OUT/r/step-profile-q8b-x64-sums-in-launch-$on.json
done
timeout 60 python3 bench/cuda_step_profile.py .real/q35.gguf --seqs 64 --depth 128 --steps 8 --out $OUT/r 2>&1 \
  | grep -E "wall|mmv|experts_gemm|delta|order" | cut -c1-110
mv $OUT/r/step-profile-x64-d128.json $OUT/r/step-profile-q35-x64-s44a.json
for on in False True; do
  timeout 120 python3 -c "import sys; import zinc.backends.cuda.ops as o; o.SPLIT_SUMS_IN_LAUNCH = $on; from zinc.cli import main; sys.exit(main(sys.argv[1:]))" \
    bench -m .real/q8b.gguf --backend cuda -p 0 -n 64 --parallel 8,16,64 -r 1 --json > $OUT/r/s44a_sums_$on.json 2> /tmp/s$on.log
  echo "SPLIT_SUMS_IN_LAUNCH=$on"; grep -E "verified|: run" /tmp/s$on.log | cut -c1-200
done
date
