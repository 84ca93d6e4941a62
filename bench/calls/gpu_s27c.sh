# Session 27, call c: call a found head-major cells no faster, and a shadow of the split kernel making only its loads as
# slow as the kernel at 16,512 cells. Here: split configurations at 16,512 cells for the kernel and its loads shadow
# (bench/cuda_attn_layout.py --sweep), then Nsight Compute on the backend's split kernel at 16,512 cells (stall
# reasons, memory throughput, the SASS lines with the most stall samples).
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 200 python3 bench/cuda_attn_layout.py --sweep --out $OUT/r 2>>$OUT/r/err.log
N=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1)
timeout 200 $N --clock-control none -k regex:attn_split --launch-skip 4 --launch-count 1 --section SpeedOfLight \
  --section Occupancy --section WarpStateStats --section SourceCounters --section MemoryWorkloadAnalysis \
  -o $OUT/r/split python3 bench/cuda_decode_ncu.py > $OUT/r/ncu.log 2>&1; tail -2 $OUT/r/ncu.log
$N -i $OUT/r/split.ncu-rep --print-summary none --page details --csv > $OUT/r/details.csv 2>&1
python3 - <<'PY'
import csv, os
rows = list(csv.reader(open(os.environ["OUT"] + "/r/details.csv")))
hi = next(i for i, r in enumerate(rows) if "Metric Name" in r)
h = rows[hi]; ix = {c: i for i, c in enumerate(h)}
for r in rows[hi + 1:]:
    if len(r) == len(h) and (r[ix["Section Name"]] in ("GPU Speed Of Light Throughput", "Warp State Statistics",
                                                       "Memory Workload Analysis", "Occupancy")):
        print(r[ix["Metric Name"]][:48].ljust(48), r[ix["Metric Value"]], r[ix["Metric Unit"]])
PY
$N -i $OUT/r/split.ncu-rep --page source --csv --print-source sass > $OUT/r/src-split.csv 2>&1
python3 bench/ncu_top.py $OUT/r/src-split.csv 20
$N -i $OUT/r/split.ncu-rep --page raw --csv 2>/dev/null | python3 -c "
import csv, sys
r = list(csv.reader(sys.stdin)); h, v = r[0], r[-1]
for n, x in zip(h, v):
    if 'smsp__pcsamp_warps_issue_stalled' in n and not n.endswith('not_issued'):
        try:
            if float(x.replace(',', '')) > 0: print(n.replace('smsp__pcsamp_warps_issue_stalled_', 'stall ').ljust(50), x)
        except ValueError: pass
"
rm -f $OUT/r/split.ncu-rep
