# Session 44, call b (any card, ~4 min; not run in session 44: for the next): where the 64-row tile GEMM's time goes.
# Nsight Compute on experts_gemm_kernel at Qwen3-8B's Q / O shape (Q4_K 4096 x 4096, 64 rows, 64 columns, 8 K-splits:
# 512 programs of 8 steps; session 44 H100: 20.0 us with its torch sum) and its gate + up (64 columns swapped, 2 K-splits
# summed and activated in the launch: 384 programs of 32 steps; 63.2 us): duration, stall reasons, occupancy, the SASS
# lines with the most stall samples.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
N=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1)
for s in "0 64,4,3,0,8 qo" "3 64,4,3,1,2,1 gu"; do
  set -- $s
  timeout 150 $N --clock-control none -k regex:experts_gemm --launch-skip 2 --launch-count 1 --section SpeedOfLight \
    --section Occupancy --section WarpStateStats --section SourceCounters --section LaunchStats \
    -o $OUT/r/$3 python3 bench/cuda_tiles_gemm_bench.py --rows 64 --shapes $1 --configs "$2" --out /tmp > $OUT/r/ncu_$3.log 2>&1
  tail -1 $OUT/r/ncu_$3.log
  $N -i $OUT/r/$3.ncu-rep --print-summary none --page details --csv > $OUT/r/details_$3.csv 2>&1
  python3 bench/ncu_top.py --details $OUT/r/details_$3.csv
  $N -i $OUT/r/$3.ncu-rep --page source --csv --print-source sass > $OUT/r/src_$3.csv 2>&1
  python3 bench/ncu_top.py $OUT/r/src_$3.csv 14 | cut -c1-150
  $N -i $OUT/r/$3.ncu-rep --page raw --csv > $OUT/r/raw_$3.csv 2>/dev/null
  python3 bench/ncu_top.py --stalls $OUT/r/raw_$3.csv
  rm -f $OUT/r/$3.ncu-rep
done
