"""Dequantization throughput of zinc.gguf.quants (NumPy, one thread), per ggml type.

For each type: build ~64M weights of random valid blocks, check a sample bit for bit against
gguf-py's decoder (when installed), then time ``dequantize`` a few times and report the best
run in million weights per second (and the GB/s of raw input and f32 output).

    python bench/bench_dequant.py [--json] [--weights 64M] [--repeat 3] [--types Q4_K,Q6_K]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from zinc.gguf.constants import BLOCK_LAYOUT, GGMLType  # noqa: E402
from zinc.gguf.quants import dequantize, random_blocks, supported_types  # noqa: E402

DEFAULT_TYPES = [
    "F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0",
    "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ4_NL", "IQ4_XS", "MXFP4",
]


def parse_count(s: str) -> int:
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(s[:-1]) * mult[s[-1].upper()]) if s[-1].upper() in mult else int(s)


def verify(t: GGMLType, raw: np.ndarray) -> str:
    """'exact', 'MISMATCH' or 'skipped' for the first 64 blocks against gguf-py."""
    try:
        import gguf
        from gguf.quants import dequantize as ref
        qt = gguf.GGMLQuantizationType(int(t))
    except Exception:
        return "skipped"
    blk, nbytes = BLOCK_LAYOUT[t]
    sample = raw[: 64 * nbytes]
    try:
        theirs = np.asarray(ref(sample.reshape(-1, nbytes), qt), np.float32).reshape(-1)
    except NotImplementedError:
        return "skipped"
    ours = dequantize(sample, t, sample.size // nbytes * blk)
    return "exact" if np.array_equal(ours.view(np.uint32), theirs.view(np.uint32)) else "MISMATCH"


def bench_type(t: GGMLType, n_weights: int, repeat: int, rng: np.random.Generator) -> dict:
    blk, nbytes = BLOCK_LAYOUT[t]
    n = n_weights // blk * blk
    t0 = time.perf_counter()
    raw = random_blocks(t, n, rng)
    gen_s = time.perf_counter() - t0
    check = verify(t, raw)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = dequantize(raw, t, n)
        best = min(best, time.perf_counter() - t0)
        del out
    return {
        "type": t.name,
        "weights": n,
        "bytes": int(raw.size),
        "best_s": best,
        "mweights_per_s": n / best / 1e6,
        "in_gb_per_s": raw.size / best / 1e9,
        "out_gb_per_s": 4 * n / best / 1e9,
        "random_blocks_gb_per_s": raw.size / gen_s / 1e9,
        "verified": check,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON document instead of a table")
    ap.add_argument("--weights", default="64M", help="weights per type (K/M/G suffixes), default 64M")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per type (best is reported)")
    ap.add_argument("--types", default=",".join(DEFAULT_TYPES), help="comma-separated ggml type names")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    known = {t.name: t for t in supported_types()}
    types = [known[name.strip().upper()] for name in args.types.split(",") if name.strip()]
    rng = np.random.default_rng(args.seed)
    n_weights = parse_count(args.weights)
    rows = []
    for t in types:
        rows.append(bench_type(t, n_weights, args.repeat, rng))
        if not args.json:
            r = rows[-1]
            if len(rows) == 1:
                print(f"{'type':8s} {'Mweights/s':>11s} {'in GB/s':>8s} {'out GB/s':>9s} {'gen GB/s':>9s}  verified")
            print(
                f"{r['type']:8s} {r['mweights_per_s']:11.1f} {r['in_gb_per_s']:8.2f} {r['out_gb_per_s']:9.2f}"
                f" {r['random_blocks_gb_per_s']:9.2f}  {r['verified']}",
                flush=True,
            )
    if args.json:
        meta = {"numpy": np.__version__, "python": platform.python_version(), "machine": platform.machine()}
        print(json.dumps({"bench": "dequant", "meta": meta, "weights": n_weights, "results": rows}, indent=1))
    return 1 if any(r["verified"] == "MISMATCH" for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
