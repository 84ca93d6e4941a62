"""Decode attention on q8_0 KV cells against f16 ones, on a GPU: check, then time split configurations.

`python bench/cuda_kvq8_sweep.py [--cells 4096,16384] [--out DIR]` (on the H200): Qwen3-8B's decode
shape (1 query row, 32 query heads over 8 KV heads of 128). For each cache size, 36 layers of distinct caches
(more bytes than the L2) are attended in one replayed graph (`do_bench_cudagraph`, median); the time is per
layer, with the K+V bytes read per second. Every configuration is first checked against float64 torch math
on the dequantized cells. The f16 row runs the backend's own split table; the q8_0 rows sweep (splits, cells
per block, stages, warps). Writes DIR/kvq8-sweep.json and prints a table.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
from pathlib import Path

import torch
from triton.testing import do_bench_cudagraph

from zinc.backends.base import Q8Cells
from zinc.backends.cuda.kernels import attention as kattn
from zinc.backends.cuda.ops import attention_config

HQ, HKV, D, LAYERS = 32, 8, 128, 36


def q8_cells(x: torch.Tensor) -> Q8Cells:
    b = x.float().reshape(*x.shape[:-1], -1, 32)
    d = (b.abs().amax(-1) / 127.0).half()
    q = torch.round(b / d.float().clamp_min(1e-30)[..., None]).clamp(-127, 127).to(torch.int8)
    return Q8Cells(q.reshape(x.shape).contiguous(), d.contiguous())


def dequant(c: Q8Cells) -> torch.Tensor:
    return (c.q.float().reshape(*c.q.shape[:-1], -1, 32) * c.d.float()[..., None]).reshape(c.q.shape)


def reference(q, k, v, n):
    qd, kd, vd = q.double(), k[:n].double(), v[:n].double()
    r = HQ // HKV
    s = torch.einsum("hrd,shd->hrs", qd[0].reshape(HKV, r, D), kd) / D ** 0.5
    return torch.einsum("hrs,shd->hrd", torch.softmax(s, -1), vd).reshape(1, HQ, D)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cells", default="4096,16384")
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    a = ap.parse_args()
    dev = "cuda"
    rows = []
    for cells in (int(c) for c in a.cells.split(",")):
        n = cells - 1
        g = torch.Generator(device=dev).manual_seed(cells)
        f16 = [(torch.randn(cells, HKV, D, device=dev, generator=g).half(),
                torch.randn(cells, HKV, D, device=dev, generator=g).half()) for _ in range(LAYERS)]
        q8 = [(q8_cells(k), q8_cells(v)) for k, v in f16]
        pos = torch.arange(cells, device=dev, dtype=torch.int32)
        q = torch.randn(1, HQ, D, device=dev, generator=g)
        q_pos = torch.tensor([n - 1], device=dev, dtype=torch.int32)
        out = torch.empty(1, HQ, D, device=dev)
        ns0, bs0 = attention_config(cells)[:2]
        configs = [("f16", ns0, bs0, 3, 4)] + [("q8_0", *c) for c in itertools.product(
            (ns0, 2 * ns0, 4 * ns0), (64, 128), (2, 3), (4, 8))]
        for kind, ns, bs, st, wp in configs:
            caches = f16 if kind == "f16" else q8
            scratch = (torch.empty(HQ * ns, device=dev), torch.empty(HQ * ns, device=dev),
                       torch.empty(HQ * ns, D, device=dev))

            def one(k, v):
                kattn.decode_attention(q, k, v, q_pos, pos, cells, D ** -0.5, 0, 0.0, None, scratch, out,
                                       nsplit=ns, bs=bs, warps=wp, stages=st)

            try:
                k0, v0 = caches[0]
                one(k0, v0)
                kr, vr = (k0, v0) if kind == "f16" else (dequant(k0), dequant(v0))
                err = float((out.double() - reference(q, kr, vr, n)).abs().max())
                ms = do_bench_cudagraph(lambda: [one(k, v) for k, v in caches])
            except Exception as e:  # noqa: BLE001 - a configuration that does not compile is reported, not fatal
                print(f"{cells:6d} {kind:5s} ns={ns:3d} bs={bs:3d} st={st} w={wp}: {type(e).__name__}: {e}"[:200])
                continue
            per = ms * 1e3 / LAYERS
            nbytes = n * HKV * 2 * (D * 2 if kind == "f16" else D + D // 16)
            rows.append({"cells": cells, "kv": kind, "nsplit": ns, "bs": bs, "stages": st, "warps": wp,
                         "us": per, "tb_s": nbytes / per / 1e6, "max_err": err})
            print(f"{cells:6d} {kind:5s} ns={ns:3d} bs={bs:3d} st={st} w={wp}: {per:7.2f} us "
                  f"{nbytes / per / 1e6:5.2f} TB/s err {err:.1e}", flush=True)
        del f16, q8
        torch.cuda.empty_cache()
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "kvq8-sweep.json").write_text(json.dumps({"device": torch.cuda.get_device_name(), "rows": rows},
                                                        indent=1))
    print(f"\n{'cells':>6} {'kv':5} {'config (ns, bs, st, w)':>24} {'us':>8} {'TB/s':>6}")
    for cells in sorted({r["cells"] for r in rows}):
        for kind in ("f16", "q8_0"):
            rs = [r for r in rows if r["cells"] == cells and r["kv"] == kind]
            if rs:
                b = min(rs, key=lambda r: r["us"])
                print(f"{cells:6d} {kind:5} {str((b['nsplit'], b['bs'], b['stages'], b['warps'])):>24} "
                      f"{b['us']:8.2f} {b['tb_s']:6.2f}")


if __name__ == "__main__":
    main()
