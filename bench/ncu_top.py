"""Summaries of Nsight Compute CSV exports.

    python bench/ncu_top.py SOURCE.csv [N]     the SASS lines with the most warp-stall samples
                                               (`ncu --page source --csv --print-source sass`)
    python bench/ncu_top.py --stalls RAW.csv   the kernel's stall-reason sample counts (`ncu --page raw --csv`)
    python bench/ncu_top.py --details DET.csv  speed of light, warp state, occupancy and launch metrics
                                               (`ncu --print-summary none --page details --csv`)
"""

from __future__ import annotations

import csv
import sys

DETAIL_SECTIONS = ("GPU Speed Of Light Throughput", "Warp State Statistics", "Occupancy", "Launch Statistics")


def num(x: str) -> float:
    try:
        return float(x.replace(",", ""))
    except ValueError:
        return 0.0


def rows_of(path: str) -> list[list[str]]:
    return list(csv.reader(open(path, errors="replace")))


def top_lines(path: str, n: int) -> int:
    rows = rows_of(path)
    head = next((i for i, r in enumerate(rows) if any("Source" in c for c in r) and len(r) > 4), None)
    if head is None:
        print("no table in", path, rows[:3])
        return 1
    cols = rows[head]
    src = next(i for i, c in enumerate(cols) if c.strip() == "Source")
    samp = next((i for i, c in enumerate(cols) if "Warp Stall Sampling (All" in c), None)
    if samp is None:
        print("columns:", cols)
        return 1
    body = [r for r in rows[head + 1:] if len(r) == len(cols)]
    total = sum(num(r[samp]) for r in body) or 1.0
    print(f"{len(body)} instructions, {total:.0f} samples")
    for r in sorted(body, key=lambda r: -num(r[samp]))[:n]:
        print(f"{num(r[samp]) / total:6.1%}  {r[src][:110]}")
    return 0


def stalls(path: str) -> int:
    rows = rows_of(path)
    if len(rows) < 2:
        print("no metrics in", path)
        return 1
    pre = "smsp__pcsamp_warps_issue_stalled_"
    got = [(n[len(pre):], num(x)) for n, x in zip(rows[0], rows[-1])
           if n.startswith(pre) and not n.endswith("not_issued") and num(x) > 0]
    total = sum(v for _, v in got) or 1.0
    for name, v in sorted(got, key=lambda t: -t[1]):
        print(f"stall {name:<40} {v:>10.0f} {v / total:6.1%}")
    return 0


def details(path: str) -> int:
    rows = rows_of(path)
    head = next((i for i, r in enumerate(rows) if "Metric Name" in r), None)
    if head is None:
        print("no details in", path, rows[:3])
        return 1
    ix = {c: i for i, c in enumerate(rows[head])}
    for r in rows[head + 1:]:  # (rows without a rule stop after the value)
        if len(r) > ix["Metric Value"] and r[ix["Section Name"]] in DETAIL_SECTIONS:
            print(r[ix["Metric Name"]][:44].ljust(44), r[ix["Metric Value"]], r[ix["Metric Unit"]])
    return 0


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--stalls":
        return stalls(sys.argv[2])
    if len(sys.argv) > 2 and sys.argv[1] == "--details":
        return details(sys.argv[2])
    return top_lines(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 30)


if __name__ == "__main__":
    sys.exit(main())
