# Session 22 (second call): Nsight Compute on a decode layer's small kernels (bench/cuda_decode_ncu.py): the
# attention split and combine kernels at 128 and 16,512 cells, norm_quantize and the O matvec; durations, registers,
# occupancy, stall reasons, and the SASS lines with the most stall samples. Then tg128 with 2 splits under 256 cells.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p $OUT/r .real
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
N=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1)
timeout 240 $N --clock-control none -k regex:'attn|quantize|mmvs' --section SpeedOfLight --section LaunchStats \
  --section Occupancy --section WarpStateStats --section SourceCounters --section MemoryWorkloadAnalysis \
  -o $OUT/r/dec python3 bench/cuda_decode_ncu.py > $OUT/r/ncu.log 2>&1; tail -3 $OUT/r/ncu.log
$N -i $OUT/r/dec.ncu-rep --print-summary none --page details --csv > $OUT/r/details.csv 2>&1
python3 - <<'PY'
import csv, os
rows = list(csv.reader(open(os.environ["OUT"] + "/r/details.csv")))
hi = next(i for i, r in enumerate(rows) if "Metric Name" in r)
h = rows[hi]; ix = {c: i for i, c in enumerate(h)}; rows = rows[hi:]
want = ("Duration", "Registers Per Thread", "Achieved Occupancy", "Memory Throughput", "DRAM Throughput",
        "Warp Cycles Per Issued Instruction", "Grid Size", "Block Size", "Theoretical Occupancy")
seen = {}
for r in rows[1:]:
    if len(r) != len(h): continue
    key = (r[ix["ID"]], r[ix["Kernel Name"]][:40])
    if r[ix["Metric Name"]] in want:
        seen.setdefault(key, {})[r[ix["Metric Name"]]] = r[ix["Metric Value"]] + " " + r[ix["Metric Unit"]]
for (i, k), m in seen.items():
    print(i, k, "|", "; ".join(f"{a}={m[a]}" for a in want if a in m))
PY
for k in 'attn_split:2' 'attn_combine:2' 'attn_split:5' 'attn_combine:5' 'quantize_kernel:2' 'mmvs_kernel:2'; do
  name=${k%%:*}; skip=${k##*:}
  $N -i $OUT/r/dec.ncu-rep -k regex:$name --launch-skip $skip --launch-count 1 --page source --csv --print-source sass > $OUT/r/src-$name-$skip.csv 2>&1
  echo "== $k"; python3 bench/ncu_top.py $OUT/r/src-$name-$skip.csv 14
done
wait
F='ATTN_SPLITS=[(256,2,64),(2048,8,64),(8192,16,128),(4611686018427387904,32,64)]'
for i in 1 2; do
PYTHONPATH=$PWD/.ab/old/src timeout 80 python3 bench/cuda_tree_ab.py .real/q8b.gguf --label old$i --out $OUT/r/ab 2>>$OUT/r/err.log
timeout 80 python3 bench/cuda_tree_ab.py .real/q8b.gguf --label two$i --set "$F" --out $OUT/r/ab 2>>$OUT/r/err.log
done
rm -f $OUT/r/ab/*.npz $OUT/r/dec.ncu-rep
tar czf $OUT/s22b.tgz -C $OUT r && rm -rf $OUT/r
