"""Decode attention on a GPU: check, then time the old (CUDA-core) and new (tensor-core) split kernels.

`python bench/cuda_attn_sweep.py` (on the H200, no arguments): for each shape in SHAPES and each cache
size in CELLS, every timed configuration is first checked against float64 torch math on the same f16
cache (T query rows at the end of a cache with empty cells); the time is the median of
`do_bench_cudagraph` over a replayed graph of many layers (distinct caches, more bytes than the L2),
divided by the layers. The search: splits at a default tile, then (cells per block, warps, stages) at
the best splits, then the splits again at the best tile; plus plain-f16 operands (exact=False), 4
and 16 query rows, the old kernel and the PROPOSED table. Prints one line per result and a summary
table (cells, config, us, TB/s of K+V reads); writes $OUT/attn-sweep.json (or --out DIR).
`--small` runs tiny shapes in Triton's interpreter (no GPU) to show the script works; `--shapes a,b`
keeps some shapes; `--quick` times fewer configurations; past `--budget` seconds (420) the remaining
cache sizes are skipped (a device call ends at 600 s).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
SMALL = "--small" in sys.argv
if SMALL and not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")
    sys.path.insert(0, str(ROOT / "tests"))
    import conftest  # noqa: F401,E402  its Triton-interpreter patch (loop bounds read from tensors)
sys.path.insert(0, str(ROOT / "src"))

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from zinc.backends.cuda.kernels import attention as kattn  # noqa: E402

# name: (Hq, Hkv, D)
SHAPES = {"qwen3-8b": (32, 8, 128), "qwen35-9b": (16, 4, 256), "gemma3-4b": (8, 4, 256),
          "gemma4-31b-global": (32, 4, 512)}
CELLS = (512, 4096, 16384, 32768)
SPLITS = (8, 16, 32, 64, 128, 256)
TILES = [(bs, w, st) for bs in (64, 32, 128) for w, st in ((4, 3), (8, 3), (4, 2), (4, 4), (8, 4))]  # (BS, warps, stages)
DEFAULT_TILE = (64, None, 3)  # warps None: `kattn.tiles` picks them from the head dim
# the table proposed for ops.ATTN_SPLITS: (caches of fewer cells, splits, BS), warps from `tiles`, 3 stages
PROPOSED = [(2048, 16, 64), (8192, 32, 64), (32768, 64, 64), (1 << 62, 128, 64)]
SMALL_SHAPES = {"tiny-a": (4, 2, 32), "tiny-b": (6, 2, 64)}
SMALL_CELLS = (40, 100)
SMALL_SPLITS = (2, 4)
SMALL_TILES = [(16, 4, 2), (32, None, 3)]


@triton.jit
def old_split_kernel(q, k, v, q_pos, kv_pos, m_out, l_out, o_out, T, S, n_kv, scale, cap, window,
                     R: tl.constexpr, RP: tl.constexpr, D: tl.constexpr, DV: tl.constexpr,
                     DP: tl.constexpr, DVP: tl.constexpr, HKV: tl.constexpr, NSPLIT: tl.constexpr,
                     BS: tl.constexpr, SOFTCAP: tl.constexpr):
    """The CUDA-core split kernel this rewrite replaced (broadcast-multiply-sum), for the timings."""
    pid = tl.program_id(0)
    sp = tl.program_id(1)
    t = pid // HKV
    hk = pid % HKV
    qp = tl.load(q_pos + t)
    n_eff = tl.minimum(tl.minimum(n_kv, S), tl.load(q_pos + T - 1) + 1)
    chunk = tl.cdiv(tl.cdiv(n_eff, NSPLIT), BS) * BS
    start = sp * chunk
    end = tl.minimum(start + chunk, n_eff)
    rr = tl.arange(0, RP)
    dd = tl.arange(0, DP)
    dv = tl.arange(0, DVP)
    hq = hk * R + rr
    qv = tl.load(q + (t * HKV * R + hq)[:, None] * D + dd[None, :], mask=(rr < R)[:, None] & (dd < D)[None, :],
                 other=0.0)
    m_i = tl.full([RP], -1.0e30, tl.float32)
    l_i = tl.zeros([RP], tl.float32)
    acc = tl.zeros([RP, DVP], tl.float32)
    for s0 in range(start, end, BS):
        cell = s0 + tl.arange(0, BS)
        cm = cell < end
        kt = tl.load(k + (cell.to(tl.int64) * HKV + hk)[:, None] * D + dd[None, :],
                     mask=cm[:, None] & (dd < D)[None, :], other=0.0).to(tl.float32)
        s = tl.sum(qv[:, None, :] * kt[None, :, :], axis=2)
        if SOFTCAP:
            s = cap * (2.0 / (1.0 + tl.exp(-2.0 * s / cap)) - 1.0)
        kp = tl.load(kv_pos + cell, mask=cm, other=-1)
        vis = cm & (kp >= 0) & (kp <= qp) & ((window == 0) | (qp - kp < window))
        s = tl.where(vis[None, :], s * scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        vt = tl.load(v + (cell.to(tl.int64) * HKV + hk)[:, None] * DV + dv[None, :],
                     mask=cm[:, None] & (dv < DV)[None, :], other=0.0).to(tl.float32)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.sum(p[:, :, None] * vt[None, :, :], axis=1)
        m_i = m_new
    row = (t * HKV * R + hq) * NSPLIT + sp
    tl.store(m_out + row, m_i, mask=rr < R)
    tl.store(l_out + row, l_i, mask=rr < R)
    tl.store(o_out + row[:, None] * DV + dv[None, :], acc, mask=(rr < R)[:, None] & (dv < DV)[None, :])


def old_decode(q, k, v, q_pos, kv_pos, n_kv, scale, window, cap, sinks, scratch, out, nsplit, bs=16):
    t, hq, d = q.shape
    s, hkv, dv = v.shape
    r = hq // hkv
    m, l, o = scratch
    old_split_kernel[(t * hkv, nsplit)](q, k, v, q_pos, kv_pos, m, l, o, t, s, n_kv, scale, cap if cap else 1.0,
                                        window, R=r, RP=max(2, triton.next_power_of_2(r)), D=d, DV=dv,
                                        DP=triton.next_power_of_2(d), DVP=triton.next_power_of_2(dv), HKV=hkv,
                                        NSPLIT=nsplit, BS=bs, SOFTCAP=bool(cap), num_warps=4)
    nsp = max(2, triton.next_power_of_2(nsplit))
    kattn.attn_combine_kernel[(t * hq,)](m, l, o, sinks if sinks is not None else m, out, hq, NSPLIT=nsplit,
                                         NSP=nsp, DV=dv, DVP=triton.next_power_of_2(dv),
                                         HAS_SINK=sinks is not None, CH=nsp, num_warps=1)


def reference(q, k, v, q_pos, kv_pos, scale, window, cap, sinks):
    """float64 attention of q (T, Hq, D) over the cells of k, v (S, Hkv, D|DV) -> (T, Hq, DV)."""
    T, Hq, D = q.shape
    S, Hkv, DV = v.shape
    s = torch.einsum("thrd,shd->hrts", q.double().view(T, Hkv, Hq // Hkv, D), k.double())
    if cap:
        s = cap * torch.tanh(s / cap)
    d = q_pos[:, None].long() - kv_pos[None, :].long()
    vis = (kv_pos >= 0)[None, :] & (d >= 0)
    if window:
        vis &= d < window
    s = (s * scale).masked_fill(~vis, float("-inf"))
    if sinks is not None:
        s = torch.cat([s, sinks.double().view(Hkv, -1, 1, 1).expand(-1, -1, T, 1)], dim=3)
    p = torch.softmax(s, dim=3)[..., :S]
    return torch.einsum("hrts,shd->thrd", p, v.double()).reshape(T, Hq, DV)


class Case:
    """`layers` caches of `cells` cells of one shape (all positions written, a few holes), T query rows
    at the end, scratch for up to max(SPLITS) splits, and the float64 answer for layer 0."""

    def __init__(self, shape, cells, T, layers, dev, max_split, window=0, cap=0.0, sinks=False):
        hq, hkv, d = shape
        g = torch.Generator(device=dev).manual_seed(cells + T)
        self.k = torch.randn((layers, cells, hkv, d), device=dev, generator=g).half()
        self.v = torch.randn((layers, cells, hkv, d), device=dev, generator=g).half()
        self.kv_pos = torch.arange(cells, dtype=torch.int32, device=dev)
        self.kv_pos[torch.randperm(cells - T, device=dev, generator=g)[:3]] = -1
        self.q_pos = torch.arange(cells - T, cells, dtype=torch.int32, device=dev)
        self.q = torch.randn((T, hq, d), device=dev, generator=g)
        self.sinks = torch.randn(hq, device=dev, generator=g) if sinks else None
        self.args = (d ** -0.5, window, cap)
        self.out = torch.empty((T, hq, d), device=dev)
        n = T * hq * max_split
        self.scratch = (torch.empty(n, device=dev), torch.empty(n, device=dev), torch.empty((n, d), device=dev))
        self.want = reference(self.q, self.k[0], self.v[0], self.q_pos, self.kv_pos, *self.args, self.sinks)
        self.cells, self.layers, self.T = cells, layers, T
        self.seen = {}  # effective configuration -> its record
        self.kv_bytes = 2 * cells * hkv * d * 2  # K + V of one layer, f16

    def call(self, i, cfg):
        """Layer i with cfg = ("old", nsplit) or ("new", nsplit, bs, warps, stages, exact)."""
        a = (self.q, self.k[i], self.v[i], self.q_pos, self.kv_pos, self.cells, *self.args, self.sinks,
             self.scratch, self.out)
        if cfg[0] == "old":
            old_decode(*a, nsplit=cfg[1])
        else:
            _, ns, bs, w, st, exact = cfg
            kattn.decode_attention(*a, nsplit=ns, bs=bs, warps=w, stages=st, exact=exact)


def rel(a, b) -> float:
    a, b = a.double(), b.double()
    return float((a - b).norm() / b.norm()) if torch.isfinite(a).all() else float("inf")


def bench_us(fn) -> float:
    if SMALL:
        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1e6
    return float(triton.testing.do_bench_cudagraph(fn, rep=10, return_mode="median")) * 1e3


def measure(case, cfg, name, res, role="") -> dict:
    """Check layer 0 against float64, then time the layers; one JSON record (printed). A configuration
    that `kattn.tiles` clips to one already measured on this case is not measured again."""
    rec = {"shape": name, "cells": case.cells, "T": case.T, "kernel": cfg[0], "nsplit": cfg[1], "role": role}
    if cfg[0] == "new":
        hq, hkv, d = case.q.shape[1], case.k.shape[2], case.k.shape[3]
        bm, bs, st, w = kattn.tiles(case.T * hq // hkv, d, d, cfg[2], cfg[4], cfg[3], 2)
        cfg = ("new", cfg[1], bs, w, st, cfg[5])
        rec.update(bs=bs, warps=w, stages=st, exact=cfg[5], bm=bm)
    if cfg in case.seen:
        return dict(case.seen[cfg], role=role)
    case.seen[cfg] = rec
    try:
        case.call(0, cfg)
        rec["rel_err"] = rel(case.out, case.want)
        rec["us"] = bench_us(lambda: [case.call(i, cfg) for i in range(case.layers)]) / case.layers
        rec["TBs"] = case.kv_bytes / rec["us"] / 1e6
    except Exception as e:  # noqa: BLE001 - a configuration that does not compile or launch
        rec["error"] = repr(e)[-300:]
    res.append(rec)
    print(fmt(rec), flush=True)
    return rec


def fmt(r) -> str:
    """One result line; the role (summary) at its end."""
    cfg = (f"old ns {r['nsplit']:3}" if r["kernel"] == "old" else
           f"new ns {r['nsplit']:3} bs {r['bs']:3} w{r['warps']} st{r['stages']} {'exact' if r['exact'] else 'f16'}")
    if "error" in r:
        return f"{r['shape']:18} cells {r['cells']:6} T{r['T']:<2} {cfg:34} ERROR {r['error'][-120:]}"
    flag = "" if r["rel_err"] < (1e-5 if r.get("exact", True) else 3e-3) else "  <-- WRONG"
    return (f"{r['shape']:18} cells {r['cells']:6} T{r['T']:<2} {cfg:34} {r['us']:8.1f} us {r['TBs']:5.2f} TB/s"
            f"  err {r['rel_err']:.1e}{flag}  {r.get('role', '')}")


def best(recs):
    ok = [r for r in recs if "us" in r and r["rel_err"] < (1e-5 if r.get("exact", True) else 3e-3)]
    return min(ok, key=lambda r: r["us"]) if ok else None


def sweep_shape(name, shape, cells_list, splits, tiles, quick, dev, res, deadline, save) -> list[dict]:
    """The search for one shape (cache sizes left out once past the deadline); the summary records,
    saved (`save(summary)`) after each cache size."""
    summary = []
    hkv, d = shape[1], shape[2]
    for cells in cells_list:
        if time.time() > deadline:
            print(f"{name} cells {cells}: skipped, past the time budget", flush=True)
            continue
        layers = 1 if SMALL else max(1, min(64, -(-(256 << 20) // (4 * cells * hkv * d))))
        case = Case(shape, cells, 1, layers, dev, max(splits))
        sps = [ns for ns in splits if cells // ns >= 16]
        new = lambda ns, t, exact=True: ("new", ns, *t, exact)  # noqa: E731
        a = [measure(case, new(ns, tiles[0] if SMALL else DEFAULT_TILE), name, res) for ns in sps]
        ns0 = (best(a) or {"nsplit": sps[0]})["nsplit"]
        b = [measure(case, new(ns0, t), name, res) for t in (tiles[:4] if quick else tiles)]
        top = best(b)
        tile = (top["bs"], top["warps"], top["stages"]) if top else DEFAULT_TILE
        c = [measure(case, new(ns, tile), name, res) for ns in sps if ns != ns0]
        win = best(a + b + c)
        if win is None:
            continue
        wtile = (win["bs"], win["warps"], win["stages"])
        lim = next(p for p in PROPOSED if cells < p[0])
        prop = measure(case, new(min(lim[1], sps[-1]), (lim[2], None, 3)), name, res, "proposed")
        f16 = measure(case, new(win["nsplit"], wtile, False), name, res, "best, f16 operands")
        olds = [measure(case, ("old", ns), name, res) for ns in sps if ns in (16, 32, 64, 128) or SMALL]
        summary += [dict(r, role=role) for r, role in ((best(olds), "old best"), (win, "new best"),
                                                       (prop, "proposed"), (f16, "best, f16 operands")) if r]
        del case
        for T in (4, 16):
            case = Case(shape, cells, T, layers, dev, max(splits), window=cells // 3, cap=30.0, sinks=True)
            summary.append(measure(case, new(win["nsplit"], wtile), name, res, "best, window+cap+sinks"))
            del case
        if dev.type == "cuda":
            torch.cuda.empty_cache()
        save(summary)
    return summary


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    ap.add_argument("--shapes", default="", help="comma-separated names of SHAPES")
    ap.add_argument("--quick", action="store_true", help="fewer tiles")
    ap.add_argument("--small", action="store_true", help="tiny shapes in Triton's interpreter")
    ap.add_argument("--budget", type=float, default=420.0, help="seconds; later cache sizes are skipped")
    args = ap.parse_args()
    deadline = time.time() + args.budget
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.backends.cuda.matmul.allow_tf32 = False
    shapes = SMALL_SHAPES if SMALL else SHAPES
    if args.shapes:
        shapes = {k: v for k, v in shapes.items() if k in args.shapes.split(",")}
    res, summary = [], []
    args.out.mkdir(parents=True, exist_ok=True)
    gpu = torch.cuda.get_device_name() if dev.type == "cuda" else "cpu (Triton interpreter)"

    def save(part):
        (args.out / "attn-sweep.json").write_text(json.dumps({"gpu": gpu, "proposed": PROPOSED,
                                                              "summary": summary + part, "results": res}, indent=1))

    for name, shape in shapes.items():
        summary += sweep_shape(name, shape, SMALL_CELLS if SMALL else CELLS, SMALL_SPLITS if SMALL else SPLITS,
                               SMALL_TILES if SMALL else TILES, args.quick, dev, res, deadline, save)
    print("\nsummary")
    for r in summary:
        print(fmt(r))
    bad = [r for r in res if "error" in r or r["rel_err"] >= (1e-5 if r.get("exact", True) else 3e-3)]
    print(f"{len(res)} results, {len(bad)} failed or wrong" + (f"; first: {fmt(bad[0])}" if bad else ""))
    return 1 if any("rel_err" in r and r["rel_err"] >= 3e-3 for r in bad) else 0


if __name__ == "__main__":
    sys.exit(main())
