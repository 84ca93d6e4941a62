"""Does the KV cells' layout set the decode attention's speed at depth? Cell-major against head-major cells.

    python bench/cuda_attn_layout.py [--out DIR]     (on a GPU; the head-major rows with bench/wip/kv-head-major.patch)
    python bench/cuda_attn_layout.py --sweep [--cfgs ROWS | --cfgs cells] [--out DIR]

Session 27 (H100) measured no difference (bench/RESULTS.md), so the backend's cells stayed cell-major and the
kernels' head-major form lives in bench/wip/kv-head-major.patch; without it this script times cell-major cells only.

Qwen3-8B's attention shapes (32 query heads, 8 KV heads, head dim 128, f16 cells), one token, caches of 4,224 and
16,512 cells holding 4,096 / 16,384 tokens. For each layout (`ops.KV_HEAD_MAJOR`: cell-major cells give a split
program 256-byte pieces of its head 2 KB apart; head-major ones one contiguous run) three kernels, each timed over
36 layers' caches in turn (so the L2 holds none of them; median of a replayed CUDA graph, µs a layer):
- "attention": the decode's split + combine launches with the rope and the KV write (`kattn.decode_attention`, the
  backend's split rows `ops.attention_config`);
- "loads": a shadow of the split kernel making only its tile loads (same grid, cells a step, pipeline stages) and
  summing them: the read pattern's own ceiling;
- "stream": one contiguous read of the same bytes (the plain read ceiling, as bench/cuda_read_ceiling.py).
TB/s counts the K and V bytes of the cells in use. Prints a table; --out writes attn-layout.json. --sweep instead times
the attention and its loads shadow at 16,512 cells for split rows (splits, cells a step, stages, warps), or with
--cfgs cells a shadow whose programs read every head of their cells (one contiguous run a program).
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).parent))

from cuda_read_ceiling import _sum_kernel  # noqa: E402
from zinc.backends.cuda.kernels import attention as kattn  # noqa: E402
from zinc.backends.cuda.kernels import mmvq  # noqa: E402
from zinc.backends.cuda.ops import attention_config  # noqa: E402

HQ, HKV, D = 32, 8, 128
LAYERS = 36


def _head_major(k, v) -> bool:
    """Whether the backend's kernels take these cells as head-major (only with bench/wip/kv-head-major.patch)."""
    from zinc.backends.cuda.kernels import kvq8

    return kvq8.head_major(k, v) if hasattr(kvq8, "head_major") else False


@triton.jit
def _row(cell, h, S, H, HM: tl.constexpr):
    if HM:
        return tl.cast(h, tl.int64) * S + cell
    return tl.cast(h, tl.int64) + cell * H


@triton.jit
def _split(n, NSPLIT, BS: tl.constexpr, sp):
    """Split sp's cells [start, end) of n, as `kattn.attn_split_kernel` divides them."""
    chunk = tl.cdiv(tl.cdiv(n, NSPLIT), BS) * BS
    start = sp * chunk
    return start, tl.minimum(start + chunk, n)


@triton.jit
def _loads(k, v, out, n, S, NSPLIT, HKV: tl.constexpr, D: tl.constexpr, BS: tl.constexpr, HM: tl.constexpr):
    """The split kernel's K and V tile loads of head program_id(0)'s split program_id(1), summed."""
    hk = tl.program_id(0)
    sp = tl.program_id(1)
    start, end = _split(n, NSPLIT, BS, sp)
    c = tl.arange(0, BS)
    dd = tl.arange(0, D)
    acc = tl.zeros([D], tl.float32)
    for s0 in range(start, end, BS):
        first = _row(s0, hk, S, HKV, HM)
        if HM:
            cr = c
        else:
            cr = c * HKV
        cm = (s0 + c < end)[:, None]
        kt = tl.load(k + first * D + (cr * D)[:, None] + dd[None, :], mask=cm, other=0.0)
        vt = tl.load(v + first * D + (cr * D)[:, None] + dd[None, :], mask=cm, other=0.0)
        acc += tl.sum(kt.to(tl.float32) + vt.to(tl.float32), axis=0)
    tl.store(out + (hk * NSPLIT + sp) * D + dd, acc)


@triton.jit
def _loads_cells(k, v, out, n, NSPLIT, W: tl.constexpr, BS: tl.constexpr):
    """A shadow of a split kernel whose programs take every head of their cells (cell-major rows of W = HKV * D
    values, one contiguous run a program): the K and V rows of split program_id(0)'s cells, summed."""
    sp = tl.program_id(0)
    start, end = _split(n, NSPLIT, BS, sp)
    c = tl.arange(0, BS)
    w = tl.arange(0, W)
    acc = tl.zeros([W], tl.float32)
    for s0 in range(start, end, BS):
        cm = (s0 + c < end)[:, None]
        o = (s0 + c).to(tl.int64)[:, None] * W + w[None, :]
        acc += tl.sum(tl.load(k + o, mask=cm, other=0.0).to(tl.float32) + tl.load(v + o, mask=cm, other=0.0).to(
            tl.float32), axis=0)
    tl.store(out + sp * W + w, acc)


def _cells(S: int, head_major: bool, g: torch.Generator) -> torch.Tensor:
    if head_major:
        return torch.randn(HKV, S, D, device="cuda", generator=g).half().permute(1, 0, 2)
    return torch.randn(S, HKV, D, device="cuda", generator=g).half()


def _time(fn) -> float:
    """Median µs of one call of fn (which runs LAYERS layers), a layer."""
    fn()
    torch.cuda.synchronize()
    with torch.cuda.stream(torch.cuda.Stream()):
        ms = float(triton.testing.do_bench_cudagraph(fn, rep=100, return_mode="median"))
    return ms * 1e3 / LAYERS


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, n: int) -> torch.Tensor:
    """f32 attention of the query rows q (HQ, D) over the first n cells of k, v (S, HKV, D): (HQ, D)."""
    kk = k[:n].float().repeat_interleave(HQ // HKV, dim=1)
    vv = v[:n].float().repeat_interleave(HQ // HKV, dim=1)
    sc = torch.einsum("hd,chd->hc", q.float(), kk) / math.sqrt(D)
    return torch.einsum("hc,chd->hd", torch.softmax(sc, dim=-1), vv)


def decode_case(S: int, n: int) -> tuple:
    """One token's attention over LAYERS random f16 caches of S cells holding n + 1 tokens (the new one's cell n
    included as written): (caches, cell positions, the query position, q (1, HQ, D), its rows times the score scale
    in base 2 (HQ, D), the scale, the K + V bytes in use, and the f32 reference output (HQ, D) of the last layer,
    whose output is what a timed call over the layers leaves)."""
    g = torch.Generator(device="cuda").manual_seed(0)
    caches = [(torch.randn(S, HKV, D, device="cuda", generator=g).half(),
               torch.randn(S, HKV, D, device="cuda", generator=g).half()) for _ in range(LAYERS)]
    cp = torch.full((S,), -1, dtype=torch.int32, device="cuda")
    cp[:n + 1] = torch.arange(n + 1, device="cuda", dtype=torch.int32)
    pos = torch.tensor([n], dtype=torch.int32, device="cuda")
    scale = 1.0 / math.sqrt(D)
    q = torch.randn(1, HQ, D, device="cuda", generator=g)
    q2 = (q[0] * scale * 1.4426950408889634).contiguous()
    return (caches, cp, pos, q, q2, scale, (n + 1) * HKV * D * 2 * 2,
            reference(q[0], caches[-1][0], caches[-1][1], n + 1))


def combine(m, l, o, out, ns: int) -> None:
    """The backend's combine (`kattn.attn_combine_kernel`, its rule for the dims a program) of ns splits' max, sum
    and output rows into out (1, HQ, D)."""
    nsp = max(2, triton.next_power_of_2(ns))
    dc = kattn.COMBINE_DIMS if nsp * D > kattn.COMBINE_WHOLE else D
    kattn.attn_combine_kernel[(HQ, triton.cdiv(D, dc))](m, l, o, m, out, m, m, m, HQ, NSPLIT=ns, NSP=nsp, DV=D, DC=dc,
                                                         HAS_SINK=False, CH=min(nsp, max(2, 4096 // dc)), QUANT=False,
                                                         num_warps=4 if nsp * dc >= 4096 else 1)


def run_case(S: int, n: int, head_major: bool, cfgs=None) -> list[dict]:
    """The three kernels of one cache size and layout; cfgs: (splits, cells a step, stages, warps) rows to time the
    attention and the loads shadow at instead of the backend's (and no stream)."""
    g = torch.Generator(device="cuda").manual_seed(0)
    r = lambda *s: torch.randn(*s, device="cuda", generator=g)  # noqa: E731
    ns, bs, stages, warps = attention_config(S)
    caches = [(_cells(S, head_major, g), _cells(S, head_major, g)) for _ in range(LAYERS)]
    assert _head_major(*caches[0]) == head_major
    cp = torch.full((S,), -1, dtype=torch.int32, device="cuda")
    cp[:n] = torch.arange(n, device="cuda", dtype=torch.int32)
    pos = torch.tensor([n], dtype=torch.int32, device="cuda")
    c = torch.pow(1e6, -torch.arange(0, 64, device="cuda", dtype=torch.float32) / 64)
    q, k, v, qw, kw = r(1, HQ, D), r(1, HKV, D), r(1, HKV, D), r(D), r(D)
    out = torch.empty((1, HQ, D), device="cuda")
    q8 = mmvq.q8_buffers(1, HQ * D, "cuda")
    scratch = (torch.empty(HQ * ns, device="cuda"), torch.empty(HQ * ns, device="cuda"),
               torch.empty((HQ * ns, D), device="cuda"))
    nbytes = (n + 1) * HKV * D * 2 * 2

    def attention():
        for ck, cv in caches:
            kattn.decode_attention(q, ck, cv, pos, cp, S, 0.088, 0, 0.0, None, scratch, out, nsplit=ns, bs=bs,
                                   stages=stages, warps=warps, exact=False, q8=q8,
                                   rope=(qw, k, kw, v, c, None, 1e-6, 1.0, D, True, True))

    sums = torch.empty((HKV * ns, D), device="cuda")

    def loads():
        for ck, cv in caches:
            _loads[(HKV, ns)](ck, cv, sums, n + 1, S, ns, HKV=HKV, D=D, BS=bs, HM=head_major, num_warps=warps or 4,
                              num_stages=stages)

    rows = []
    lay = "head-major" if head_major else "cell-major"

    def record(kernel: str, fn, **cfg) -> None:
        us = _time(fn)
        rows.append(dict(cells=S, tokens=n, layout=lay, kernel=kernel, **cfg, us=us, TBs=nbytes / us / 1e6))
        if cfgs:
            print(f"{S} {lay} {kernel}: " + " ".join(f"{k} {v}" for k, v in cfg.items())
                  + f": {us:6.2f} us {nbytes / us / 1e6:.2f} TB/s", flush=True)

    if cfgs == "cells":
        for ns, bs, stages, warps in ((128, 16, 3, 4), (128, 16, 3, 8), (256, 8, 3, 4), (128, 8, 4, 4), (64, 16, 3, 4),
                                      (256, 16, 3, 4), (128, 32, 2, 8)):
            part = torch.empty((ns, HKV * D), device="cuda")

            def cells():
                for ck, cv in caches:
                    _loads_cells[(ns,)](ck, cv, part, n + 1, ns, W=HKV * D, BS=bs, num_warps=warps, num_stages=stages)
            record("loads, all heads a program", cells, splits=ns, bs=bs, stages=stages, warps=warps)
    elif cfgs:
        for ns, bs, stages, warps in cfgs:  # attention() and loads() read these, scratch and sums at each call
            scratch = (torch.empty(HQ * ns, device="cuda"), torch.empty(HQ * ns, device="cuda"),
                       torch.empty((HQ * ns, D), device="cuda"))
            sums = torch.empty((HKV * ns, D), device="cuda")
            record("attention", attention, splits=ns, bs=bs, stages=stages, warps=warps)
            record("loads", loads, splits=ns, bs=bs, stages=stages, warps=warps)
    else:
        flat = [torch.randint(0, 100, (nbytes // 4,), dtype=torch.int32, device="cuda") for _ in range(LAYERS)]
        parts = torch.empty(triton.cdiv(nbytes // 4, 8192), dtype=torch.int32, device="cuda")

        def stream():
            for x in flat:
                _sum_kernel[(triton.cdiv(x.numel(), 8192),)](x, parts, x.numel(), CHUNK=8192, STEP=1024, num_warps=4)

        for name, fn in (("attention", attention), ("loads", loads), ("stream", stream)):
            record(name, fn, splits=ns, bs=bs)
        del flat
    del caches
    torch.cuda.empty_cache()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    ap.add_argument("--sweep", action="store_true", help="split configurations at 16,512 cells instead")
    ap.add_argument("--cfgs", help="with --sweep: a Python list of (splits, cells a step, stages, warps), or 'cells': "
                    "a loads shadow whose programs take every head of their cells")
    a = ap.parse_args()
    rows = []
    if a.sweep:
        cfgs = [(16, 128, 3, 4), (16, 64, 4, 4), (32, 64, 3, 4), (32, 64, 4, 4), (32, 128, 2, 4), (64, 64, 3, 4),
                (16, 128, 3, 8), (32, 64, 3, 8), (24, 64, 4, 4), (8, 128, 3, 4)]
        if a.cfgs:
            cfgs = a.cfgs if a.cfgs == "cells" else ast.literal_eval(a.cfgs)
        rows = run_case(16512, 16384, False, cfgs)
        if a.out:
            a.out.mkdir(parents=True, exist_ok=True)
            (a.out / "attn-sweep.json").write_text(json.dumps(dict(device=torch.cuda.get_device_name(), rows=rows),
                                                              indent=1))
        return
    from zinc.backends.cuda.kernels import kvq8

    for S, n in ((4224, 4096), (16512, 16384)):
        for hm in (False, True) if hasattr(kvq8, "head_major") else (False,):
            rows += run_case(S, n, hm)
    print(f"{torch.cuda.get_device_name()}: Qwen3-8B decode attention, µs a layer (TB/s of the K+V bytes in use)")
    print("| cells | layout | attention | loads only | stream |")
    print("| ---: | --- | ---: | ---: | ---: |")
    for i in range(0, len(rows), 3):
        at, ld, st = rows[i:i + 3]
        print(f"| {at['cells']} | {at['layout']} | {at['us']:.2f} ({at['TBs']:.2f}) | {ld['us']:.2f} ({ld['TBs']:.2f}) "
              f"| {st['us']:.2f} ({st['TBs']:.2f}) |")
    if a.out:
        a.out.mkdir(parents=True, exist_ok=True)
        (a.out / "attn-layout.json").write_text(json.dumps(dict(device=torch.cuda.get_device_name(), rows=rows),
                                                           indent=1))


if __name__ == "__main__":
    main()
