"""Matmuls of 8-128 rows (a batched decode step of that many sequences, a short prompt) at the shapes of Qwen3-8B
Q4_K_M: the tile GEMM (`CudaOps._gemm_tiles`: `kmoe.experts_gemm` with one expert) over a configuration grid,
against the whole-weight dequantize + cuBLAS it replaced and a cuBLAS f16 GEMM on a weight dequantized beforehand
(what a float16 copy of the weights would cost). Checked against a float32 product of the dequantized weight.
Prints us, the weight's GB/s and the best configurations per (shape, rows); JSON under --out.

    python bench/cuda_tiles_gemm_bench.py [--out DIR] [--rows 16,64,128] [--shapes 0,3]
        [--configs 'bn,w,st,swap,split[,sums[,maxnreg]];...']
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np
import torch
from triton.testing import do_bench_cudagraph

from zinc.backends.base import QTensor
from zinc.backends.cuda.kernels import elementwise as kel
from zinc.backends.cuda.kernels import moe as kmoe
from zinc.backends.cuda.ops import CudaOps
from zinc.gguf.constants import GGMLType as T
from zinc.gguf.quants import random_blocks

SHAPES = [  # name, type, N, K, glu
    ("q", T.Q4_K, 4096, 4096, False),
    ("k", T.Q4_K, 1024, 4096, False),
    ("v", T.Q6_K, 1024, 4096, False),
    ("gate+up", T.Q4_K, 12288, 4096, True),
    ("down", T.Q6_K, 4096, 12288, False),
    ("down", T.Q4_K, 4096, 12288, False),
    ("lm_head", T.Q6_K, 151936, 4096, False),
    # Qwen3.5-35B-A3B: a DeltaNet layer's q / k / v (Q6_K in a third of the layers) and z, its output, the attention
    # layers' q + gate
    ("q35 qkv", T.Q4_K, 8192, 2048, False),
    ("q35 qkv", T.Q6_K, 8192, 2048, False),
    ("q35 z", T.Q4_K, 4096, 2048, False),
    ("q35 out", T.Q4_K, 2048, 4096, False),
]
GRID = [(bn, w, st, sw, 1, 0, 0) for bn in (32, 64, 128) for w, st in ((4, 3), (8, 3), (4, 4)) for sw in (0, 1)]
GRID += [(bn, 4, 3, sw, sp, 0, 0) for bn in (32, 64) for sw in (0, 1) for sp in (2, 4)]  # split K (glu: with sums only)


def _graph_us(fn) -> float:
    """Median µs of fn replayed as a CUDA graph: the kernels' time without the host's launch cost (session 43: timed
    launch by launch, a 30-70 µs split GEMM and its sum measured 31.4 in one run and 67.6 in the next)."""
    with torch.cuda.stream(torch.cuda.Stream()):
        return float(do_bench_cudagraph(fn, rep=30, return_mode="median")) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    ap.add_argument("--rows", default="16,64,128")
    ap.add_argument("--shapes", default="", help="comma-separated SHAPES indices (default: all)")
    ap.add_argument("--configs", default="", help="'bn,warps,stages,swap,splits[,sums[,maxnreg]];...' instead of "
                    "GRID (sums 1: the splits summed in the launch; maxnreg: ptxas's register cap, 0 none)")
    a = ap.parse_args()
    dev = "cuda" if torch.cuda.is_available() else "cpu"  # cpu: a smoke run (TRITON_INTERPRET=1, tiny --configs)
    ops = CudaOps(device=dev, graphs=False)
    rng = np.random.default_rng(0)
    grid = [(tuple(map(int, c.split(","))) + (0, 0))[:7] for c in a.configs.split(";")] if a.configs else GRID
    sems = torch.zeros(1 << 14, dtype=torch.int32, device=dev)  # split counters for configs summing in the launch
    rows = []
    for name, t, n, k, glu in [SHAPES[int(i)] for i in a.shapes.split(",")] if a.shapes else SHAPES:
        ws = [ops.upload(QTensor(f"w{i}", t, (n, k), random_blocks(t, n * k, rng, scale=0.05)))
              for i in range(1 + glu)]
        deq16 = [ops.dequantize(w, torch.float16) for w in ws]
        wbytes = sum(sum(p.numel() * p.element_size() for p in w.parts) for w in ws)
        for m in map(int, a.rows.split(",")):
            x = torch.randn(m, k, device=dev)
            ys = [x @ d.float().t() for d in deq16]
            want = torch.nn.functional.silu(ys[0]) * ys[1] if glu else ys[0]

            def err(got):
                return float((got.float() - want).norm() / want.norm())

            def floor():
                y = [(x.half() @ d.t()) for d in deq16]
                return torch.nn.functional.silu(y[0].float()) * y[1].float() if glu else y[0]

            def cublas():
                y = [(x.half() @ ops.dequantize(w, torch.float16).t()) for w in ws]
                return torch.nn.functional.silu(y[0].float()) * y[1].float() if glu else y[0]

            def tiles():
                return ops.matmul_glu(x, ws[0], ws[1], "silu") if glu else ops.matmul(x, ws[0])

            variants = [("f16 floor", floor), ("deq+cublas", cublas), ("tiles default", tiles)]
            bm = min(64, max(16, 1 << (m - 1).bit_length()))
            ids = torch.zeros(m, 1, dtype=torch.int32, device=dev)
            nb = -(-m // bm)  # rows 0..m-1 then -1 padding, every block expert 0 (as `CudaOps._gemm_tiles`)
            pairs = torch.arange(nb * bm, dtype=torch.int32, device=dev)
            aligned = (torch.where(pairs < m, pairs, -1), torch.zeros(nb, dtype=torch.int32, device=dev))
            for bn, w, st, sw, sp, sums, nreg in grid:
                if glu and sp > 1 and not sums:
                    continue

                def fn(bn=bn, w=w, st=st, sw=sw, sp=sp, sums=sums, nreg=nreg):
                    return kmoe.experts_gemm(x, ws[0].parts, int(t), 1, n, k, ids, aligned, bm=bm, bn=bn, warps=w,
                                             stages=st, swap=bool(sw), splits=sp, sems=sems if sums else None,
                                             maxnreg=nreg,
                                             glu=(ws[1].parts, kel.GLU_ACTS["silu"]) if glu else None)[:, 0]
                variants.append((f"bm={bm} bn={bn} w={w} st={st} swap={sw} split={sp} sums={sums} nreg={nreg}", fn))
            for vname, fn in variants:
                try:
                    e = err(fn())
                    us = _graph_us(fn) if dev == "cuda" else 1.0
                except Exception as ex:  # noqa: BLE001 - a failing configuration is reported, the rest still run
                    print(f"{name} {t.name} M={m} {vname}: {type(ex).__name__}: {ex}"[:240], flush=True)
                    continue
                rows.append(dict(shape=name, type=t.name, n=n, k=k, rows=m, variant=vname, us=us, rel_err=e,
                                 GB_s=wbytes / us / 1e3))
            sel = {r["variant"]: r for r in rows if r["shape"] == name and r["type"] == t.name and r["rows"] == m}
            ok = sorted((r for v, r in sel.items() if v.startswith("bm=") and r["rel_err"] < 5e-3),
                        key=lambda r: r["us"])[:3]

            def us(v):
                return f"{sel[v]['us']:8.1f}" if v in sel else "     nan"
            print(f"{name:8} {t.name:5} M={m:4d}: floor {us('f16 floor')} cublas {us('deq+cublas')} tiles "
                  f"{us('tiles default')} ({sel.get('tiles default', {}).get('GB_s', 0):6.0f} GB/s); best " +
                  "; ".join(f"{r['variant'][r['variant'].index('bn'):]} {r['us']:.1f}" for r in ok), flush=True)
    a.out.mkdir(parents=True, exist_ok=True)
    device_name = torch.cuda.get_device_name() if dev == "cuda" else "cpu"
    (a.out / "tiles-gemm.json").write_text(json.dumps({"device": device_name, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
