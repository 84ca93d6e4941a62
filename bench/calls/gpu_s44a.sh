# Session 44, call a (any card, ~5 min): the tile GEMM's K-splits summed inside the launch by each tile's last split
# (ops.SPLIT_SUMS_IN_LAUNCH, built in session 43 without a GPU left, off until this measures it): its GPU tests; a
# 64-sequence Qwen3-8B step's kernels both ways (session 43, H100, off: 10.908 ms, torch sums 704 us); zinc bench tg64
# of 8, 16 and 64 sequences both ways (session 43, H100, off: 958.4 / 1,889.3 / 5,912.1 tok/s).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /tmp/synth.log 2>&1 &
date
timeout 100 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE tests/backends/test_cuda_kernels.py \
  -k "tiles_gemm" > $OUT/r/t_a.log 2>&1
echo "== tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed|Fatal" $OUT/r/t_a.log | head -20 | cut -c1-300
wait; date
for on in False True; do
  timeout 60 python3 -c "import sys, runpy; import zinc.backends.cuda.ops as o; o.SPLIT_SUMS_IN_LAUNCH = $on; sys.argv = ['p', '.real/q8b.gguf', '--seqs', '64', '--depth', '128', '--steps', '16', '--out', '$OUT/r']; runpy.run_path('bench/cuda_step_profile.py', run_name='__main__')" \
    2>&1 | grep -E "wall|experts_gemm|reduce" | cut -c1-110
  mv $OUT/r/step-profile-x64-d128.json $OUT/r/step-profile-q8b-x64-sums-in-launch-$on.json
done
for on in False True; do
  timeout 120 python3 -c "import sys; import zinc.backends.cuda.ops as o; o.SPLIT_SUMS_IN_LAUNCH = $on; from zinc.cli import main; sys.exit(main(sys.argv[1:]))" \
    bench -m .real/q8b.gguf --backend cuda -p 0 -n 64 --parallel 8,16,64 -r 1 --json > $OUT/r/s44a_sums_$on.json 2> /tmp/s$on.log
  echo "SPLIT_SUMS_IN_LAUNCH=$on"; grep -E "verified|: run" /tmp/s$on.log | cut -c1-200
done
date
