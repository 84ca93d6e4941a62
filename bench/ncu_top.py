"""Print the SASS lines with the most warp-stall samples from `ncu --page source --csv --print-source sass` output.

    python bench/ncu_top.py SOURCE.csv [N]
"""

from __future__ import annotations

import csv
import sys


def main() -> int:
    rows = list(csv.reader(open(sys.argv[1], errors="replace")))
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    head = next((i for i, r in enumerate(rows) if any("Source" in c for c in r) and len(r) > 4), None)
    if head is None:
        print("no table in", sys.argv[1], rows[:3])
        return 1
    cols = rows[head]
    src = next(i for i, c in enumerate(cols) if c.strip() == "Source")
    samp = next((i for i, c in enumerate(cols) if "Warp Stall Sampling (All" in c), None)
    if samp is None:
        print("columns:", cols)
        return 1
    body = [r for r in rows[head + 1:] if len(r) == len(cols)]

    def num(x: str) -> float:
        try:
            return float(x.replace(",", ""))
        except ValueError:
            return 0.0

    total = sum(num(r[samp]) for r in body) or 1.0
    print(f"{len(body)} instructions, {total:.0f} samples")
    for r in sorted(body, key=lambda r: -num(r[samp]))[:n]:
        print(f"{num(r[samp]) / total:6.1%}  {r[src][:110]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
