"""A prompt's expert matmuls on the GPU: the grouped GEMM (`kernels.moe.experts_gemm`) over a configuration grid
against the paths before it (the 8-bit matvec over (token, expert) pairs, the per-expert dequantize + GEMM loop)
and, with --forms, in either operand order (SWAP; else the default rule),
at the expert shapes of Qwen3.5-35B-A3B (Q4_K / Q6_K, 256 experts of 512, 8 a token) and GPT-OSS 20B (MXFP4,
32 experts of 2880, 4 a token). Checked against a float32 product of the dequantized experts.

    python bench/cuda_experts_gemm_bench.py [--out DIR] [--tokens 16,64,...] [--forms] [--shapes 0,2] [--grid 0,3]
        [--configs 'bm,bn,w,st,swap;...']
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np
import torch
from triton.testing import do_bench

from zinc.backends.base import QTensor
from zinc.backends.cuda.kernels import elementwise as kel
from zinc.backends.cuda.kernels import moe as kmoe
from zinc.backends.cuda.ops import CudaOps
from zinc.gguf.constants import GGMLType as T
from zinc.gguf.quants import random_blocks

SHAPES = [  # name, type, experts, N, K, experts a token, glu
    ("q35 gate+up", T.Q4_K, 256, 512, 2048, 8, True),
    ("q35 down", T.Q4_K, 256, 2048, 512, 8, False),
    ("q35 down", T.Q6_K, 256, 2048, 512, 8, False),
    ("oss gate+up", T.MXFP4, 32, 2880, 2880, 4, True),
    ("oss down", T.MXFP4, 32, 2880, 2880, 4, False),
]
GRID = [(0, 64, 4, 3), (0, 64, 4, 2), (0, 32, 4, 3), (0, 128, 4, 3), (0, 128, 8, 3), (16, 64, 4, 3), (32, 64, 4, 3),
        (64, 64, 4, 3), (64, 128, 8, 2), (32, 128, 8, 3), (64, 64, 8, 3)]  # bm (0: auto), bn, warps, stages
FORMS = [(0,), (1,)]  # the kernel's SWAP (default: the rule of `kmoe.experts_gemm`)


def reference(x, deq, ids, glu):
    """float32 (T, k, N): per expert, its pairs' rows times its dequantized weight."""
    n_tok, nsel = ids.shape
    xs = (x[:, None, :].expand(n_tok, nsel, x.shape[-1]) if x.dim() == 2 else x).reshape(n_tok * nsel, -1)
    flat = ids.reshape(-1).long()
    out = torch.empty(n_tok * nsel, deq[0].shape[1], device=x.device)
    for e in torch.unique(flat).tolist():
        sel = (flat == e).nonzero()[:, 0]
        y = xs[sel] @ deq[0][e].t()
        out[sel] = torch.nn.functional.silu(y) * (xs[sel] @ deq[1][e].t()) if glu else y
    return out.reshape(n_tok, nsel, -1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    ap.add_argument("--tokens", default="16,64,512,2048")
    ap.add_argument("--forms", action="store_true", help="each configuration in every FORMS entry too")
    ap.add_argument("--shapes", default="", help="comma-separated SHAPES indices (default: all)")
    ap.add_argument("--grid", default="", help="comma-separated GRID indices (default: all)")
    ap.add_argument("--configs", default="", help="'bm,bn,warps,stages,swap;...' (swap -1: the default rule) instead "
                    "of GRID and FORMS")
    a = ap.parse_args()
    ops = CudaOps(device="cuda", graphs=False)
    rng = np.random.default_rng(0)
    rows = []
    for name, t, e, n, k, nsel, glu in [SHAPES[int(i)] for i in a.shapes.split(",")] if a.shapes else SHAPES:
        qs = [QTensor(f"w{i}", t, (e, n, k), random_blocks(t, e * n * k, rng, scale=0.05)) for i in range(1 + glu)]
        ws = [ops.upload(q) for q in qs]
        deq = [ops.dequantize(w, torch.float32).view(e, n, k) for w in ws]
        for n_tok in map(int, a.tokens.split(",")):
            logits = torch.randn(n_tok, e, device="cuda")
            ids = torch.topk(logits, nsel, dim=1).indices.to(torch.int32)
            x = torch.randn(n_tok, k, device="cuda") if glu else torch.randn(n_tok, nsel, k, device="cuda")
            want = reference(x, deq, ids, glu)

            def check(got):
                return float((got - want).norm() / want.norm())

            def old():  # the paths before the grouped GEMM
                CudaOps._gemm_experts = lambda self, w, pairs: False
                try:
                    if glu:
                        return ops.matmul_experts_glu(x, ws[0], ws[1], ids, "silu")
                    return ops.matmul_experts(x, ws[0], ids)
                finally:
                    del CudaOps._gemm_experts

            variants = [("before", old)]
            grid = [GRID[int(i)] for i in a.grid.split(",")] if a.grid else GRID
            configs = ([tuple(map(int, c.split(","))) for c in a.configs.split(";")] if a.configs else
                       [g + f for g in grid for f in (FORMS if a.forms else [(-1,)])])
            for bm, bn, w, st, swap in configs:
                def fn(bm=bm, bn=bn, w=w, st=st, swap=swap):
                    return kmoe.experts_gemm(x, ws[0].parts, int(t), e, n, k, ids, bm=bm, bn=bn, warps=w, stages=st,
                                             glu=(ws[1].parts, kel.GLU_ACTS["silu"]) if glu else None,
                                             swap=None if swap < 0 else bool(swap))
                form = "auto" if swap < 0 else swap
                variants.append((f"gemm bm={bm or 'auto'} bn={bn} w={w} st={st} swap={form}", fn))
            variants.append(("align only", lambda: kmoe.align_pairs(ids, e, kmoe.block_rows(ids.numel(), e))))
            for vname, fn in variants:
                try:
                    got = fn()
                    err = check(got) if vname != "align only" else 0.0
                    us = do_bench(fn, warmup=5, rep=40) * 1e3
                except Exception as ex:  # noqa: BLE001 - a failing configuration is reported, the rest still run
                    print(f"{name} {t.name} T={n_tok} {vname}: {type(ex).__name__}: {ex}"[:240], flush=True)
                    continue
                rows.append(dict(shape=name, type=t.name, tokens=n_tok, variant=vname, us=us, rel_err=err))
            sel = [r for r in rows if r["shape"] == name and r["type"] == t.name and r["tokens"] == n_tok]
            base = next((r["us"] for r in sel if r["variant"] == "before"), float("nan"))
            ok = [r for r in sel if r["variant"].startswith("gemm") and r["rel_err"] < 5e-3]
            best = sorted(ok, key=lambda r: r["us"])[:3]
            auto = [r for r in ok if r["variant"] == "gemm bm=auto bn=64 w=4 st=3 swap=auto"]
            print(f"{name:12} {t.name:6} T={n_tok:5d}: before {base:9.1f} us; default "
                  f"{auto[0]['us'] if auto else float('nan'):8.1f} us; best " +
                  "; ".join(f"{r['variant']} {r['us']:.1f} us (err {r['rel_err']:.1e})" for r in best), flush=True)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "experts-gemm.json").write_text(json.dumps({"device": torch.cuda.get_device_name(), "rows": rows},
                                                        indent=1))


if __name__ == "__main__":
    main()
