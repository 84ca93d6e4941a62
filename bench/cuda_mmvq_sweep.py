"""Sweep the tile configurations of the 8-bit-activation decode matvec (`kernels.mmvq`) on a GPU.

`python bench/cuda_mmvq_sweep.py --out DIR`: for each Qwen3-8B weight shape, checks every variant
against float64 math on the same quantized activations, times it (median of do_bench, weight
copies rotated past the L2) next to the other variants, and writes DIR/mmvq-sweep.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch
import triton

from zinc.backends.base import QTensor
from zinc.backends.cuda.kernels import mmvq
from zinc.backends.cuda.weights import CudaWeight
from zinc.gguf.constants import GGMLType as T
from zinc.gguf.quants import random_blocks

SHAPES = [(T.Q4_K, 4096, 4096), (T.Q4_K, 1024, 4096), (T.Q6_K, 1024, 4096), (T.Q4_K, 12288, 4096),
          (T.Q4_K, 4096, 12288), (T.Q6_K, 4096, 12288), (T.Q8_0, 4096, 4096), (T.Q6_K, 151936, 4096)]
VARIANTS = [(1, 16, 1, 1), (1, 32, 1, 1), (1, 64, 1, 1), (1, 32, 2, 1), (1, 64, 2, 1), (1, 64, 4, 1),
            (2, 16, 1, 1), (2, 32, 2, 1), (2, 64, 4, 1), (4, 32, 4, 1), (1, 16, 1, 1, 1), (1, 32, 1, 1, 1),
            (1, 64, 1, 1, 1), (1, 16, 1, 2), (1, 32, 2, 2), (1, 16, 1, 4), (4, 16, 4, 1), (8, 16, 8, 1)]  # (BN, NG, warps, KS[, stages])


def bench_us(fn) -> float:
    """GPU time of one call (replayed CUDA graph of many calls: no host launch cost in it)."""
    with torch.cuda.stream(torch.cuda.Stream()):
        return float(triton.testing.do_bench_cudagraph(fn, rep=60, return_mode="median")) * 1e3


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path("."))
    ap.add_argument("--shapes", default="")
    ap.add_argument("--variants", default="", help="e.g. 4,8,4,1;2,8,2,1")
    args = ap.parse_args()
    variants = [tuple(int(v) for v in s.split(",")) for s in args.variants.split(";")] if args.variants else VARIANTS
    dev = torch.device("cuda")
    res = []
    for t, n, k in SHAPES:
        if args.shapes and f"{t.name}:{n}x{k}" not in args.shapes.split(","):
            continue
        rng = np.random.default_rng(n + k)
        qt = QTensor("w", t, (n, k), random_blocks(t, n * k, rng, scale=0.05))
        copies = max(1, min(8, (320 << 20) // qt.nbytes + 1))
        ws = [CudaWeight(qt, dev) for _ in range(copies)]
        x = torch.randn((1, k), device=dev)
        xqt = mmvq.quantize_x(x)
        q = xqt[0].cpu().numpy().view(np.int8).astype(np.float64).reshape(1, -1, 32)
        xdq = (q * xqt[1].cpu().numpy()[..., :1]).reshape(1, k)
        want = xdq @ qt.dequantize().astype(np.float64).T
        y = torch.empty((1, n), device=dev)
        it = iter(range(1 << 30))
        res.append({"type": t.name, "N": n, "K": k, "kernel": "quantize_x",
                    "us": bench_us(lambda: mmvq.quantize_x(x))})
        for v in variants:
            try:
                mmvq.matvec(xqt, ws[0].parts, int(t), n, k, y, cfg=v)
                err = float(np.linalg.norm(y.cpu().numpy() - want) / np.linalg.norm(want))
                us = bench_us(lambda: mmvq.matvec(xqt, ws[next(it) % copies].parts, int(t), n, k, y, cfg=v))
                res.append({"type": t.name, "N": n, "K": k, "kernel": "mmvq", "cfg": v, "us": us,
                            "GBs": qt.nbytes / us / 1e3, "rel_err": err})
            except Exception as e:  # noqa: BLE001 - a config that does not compile or launch
                res.append({"type": t.name, "N": n, "K": k, "kernel": "mmvq", "cfg": v, "error": repr(e)[-400:]})
        best = min((r for r in res if r.get("kernel") == "mmvq" and r["N"] == n and r["K"] == k and r["type"] == t.name
                    and "us" in r), key=lambda r: r["us"], default=None)
        print(f"{t.name:5} {n:6}x{k:<6} bytes {qt.nbytes / 1e6:7.1f} MB  "
              f"best mmvq {best['cfg'] if best else None} {best['us'] if best else 0:7.1f} us "
              f"{best['GBs'] if best else 0:6.0f} GB/s  err {best['rel_err'] if best else 0:.1e}", flush=True)
        del ws
        torch.cuda.empty_cache()
    errs = [r for r in res if "error" in r]
    if errs:
        print(f"{len(errs)} variants failed, first: {errs[0]}")
    bad = [r for r in res if r.get("rel_err", 0) > 1e-5]
    print(f"{len(bad)} variants with rel_err > 1e-5" + (f", first: {bad[0]}" if bad else ""))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "mmvq-sweep.json").write_text(json.dumps({"gpu": torch.cuda.get_device_name(), "results": res},
                                                         indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
