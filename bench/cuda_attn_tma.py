"""Decode attention over a deep f16 cache with its K and V tiles copied by the Tensor Memory Accelerator (TMA).

    python bench/cuda_attn_tma.py [--out DIR] [--cells 16512,4224]      (on an H100 / H200)
    TRITON_INTERPRET=1 python bench/cuda_attn_tma.py --check             (CPU: outputs against PyTorch)

The backend's split kernel (`kattn.attn_split_kernel`) reads a deep cache at ~3.0 TB/s on an H200 and 2.2-2.4 on an
H100 (bench/RESULTS.md, sessions 25-31 and 38), with every tile copied by per-thread asynchronous copies (cp.async:
one instruction per 16 bytes, addresses computed per thread). The TMA form (`tma_kernel`) is the same split
algorithm (R query rows of one KV head padded to BM, online softmax in base 2, tensor-core products, the backend's
combine), its (BS x D) tiles of K and V each one bulk copy from a host-made descriptor over the cache as a
(cells, HKV * D) matrix, in flight `num_stages` - 1 steps ahead. Rows: the backend at its row for the card, then the
TMA form at (splits, cells a step, warps, stages); each timed over 36 layers' caches in turn (median of a replayed
CUDA graph, µs a layer; TB/s of the K + V bytes in use) and checked against the backend and an f32 reference.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).parent))

from cuda_attn_stream import split_store, tile_step  # noqa: E402
from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: E402

NEG = tl.constexpr(-1.0e30)


@triton.jit
def tma_kernel(q, kd, vd, kv_pos, q_pos, m_out, l_out, o_out, n_kv, S, NSPLIT, R: tl.constexpr, D: tl.constexpr,
               BM: tl.constexpr, BS: tl.constexpr, STAGES: tl.constexpr):
    """Split program_id(1) of KV head program_id(0): cells [sp * chunk, +chunk), chunk = the readable extent in
    NSPLIT whole steps of BS cells; writes the split's max (natural-log units), sum and un-normalised output rows
    as `attn_split_kernel` does. q (HQ, D) f32 pre-scaled to base 2."""
    hk = tl.program_id(0)
    sp = tl.program_id(1)
    i = tl.arange(0, BM)
    rm = i < R
    head = hk * R + i
    dd = tl.arange(0, D)
    c = tl.arange(0, BS)
    qv = tl.load(q + head[:, None] * D + dd[None, :], mask=rm[:, None], other=0.0).to(tl.float16)
    qp = tl.load(q_pos + 0)
    n = tl.minimum(tl.minimum(n_kv, S), qp + 1)
    chunk = tl.cdiv(tl.cdiv(n, NSPLIT), BS) * BS
    start = sp * chunk
    end = tl.minimum(start + chunk, n)
    m_i = tl.full([BM], NEG, tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    for s0 in tl.range(start, end, BS, num_stages=STAGES):
        kt = kd.load([s0, hk * D])  # (BS, D)
        vt = vd.load([s0, hk * D])
        cell = s0 + c
        kp = tl.load(kv_pos + cell, mask=cell < end, other=-1)
        m_i, l_i, acc = tile_step(qv, kt, vt, kp, qp, m_i, l_i, acc)
    split_store(m_i, l_i, acc, head * NSPLIT + sp, rm, m_out, l_out, o_out, dd, D)


def descriptors(k: torch.Tensor, v: torch.Tensor, bs: int) -> tuple:
    """TMA descriptors of (bs, D) tiles over caches (S, HKV, D) seen as (S, HKV * D) matrices."""
    s, hkv, d = k.shape
    return tuple(TensorDescriptor(t, [s, hkv * d], [hkv * d, 1], [bs, d]) for t in (k, v))


def tma_attention(q2, descs, cp, pos, S, n, ns, bs, warps, stages, bufs, out, hq, hkv, d, combine) -> None:
    m, l, o = bufs
    tma_kernel[(hkv, ns)](q2, *descs, cp, pos, m, l, o, n, S, ns, R=hq // hkv, D=d, BM=16, BS=bs, STAGES=stages,
                          num_warps=warps)
    combine(m, l, o, out, ns)


def check() -> None:
    """Interpreter (or GPU) check against PyTorch at odd sizes, with empty and future cells."""
    dev = "cuda" if torch.cuda.is_available() and not os.environ.get("TRITON_INTERPRET") else "cpu"
    if dev == "cpu":  # the interpreter's loop bounds need the test suite's patch
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        import conftest  # noqa: F401
    from zinc.backends.cuda.kernels import attention as kattn
    hq, hkv, d = 8, 2, 64
    g = torch.Generator(device=dev).manual_seed(1)
    worst = 0.0
    for S, n, ns, bs in ((37, 37, 2, 16), (70, 53, 3, 16), (130, 129, 4, 32), (20, 5, 1, 16), (99, 99, 5, 16)):
        k = torch.randn(S, hkv, d, device=dev, generator=g).half()
        v = torch.randn(S, hkv, d, device=dev, generator=g).half()
        q = torch.randn(hq, d, device=dev, generator=g)
        cp = torch.full((S,), -1, dtype=torch.int32, device=dev)
        cp[:n] = torch.arange(n, dtype=torch.int32, device=dev)
        if n > 10:
            cp[3] = n + 5  # a cell from the future: masked
        pos = torch.tensor([n - 1], dtype=torch.int32, device=dev)
        q2 = (q / math.sqrt(d) * 1.4426950408889634).contiguous()
        bufs = (torch.empty(hq * ns, device=dev), torch.empty(hq * ns, device=dev), torch.empty((hq * ns, d), device=dev))
        out = torch.empty((1, hq, d), device=dev)

        def comb(m, l, o, out, ns, hq=hq, d=d):
            nsp = max(2, triton.next_power_of_2(ns))
            kattn.attn_combine_kernel[(hq, 1)](m, l, o, m, out, m, m, m, hq, NSPLIT=ns, NSP=nsp, DV=d, DC=d,
                                               HAS_SINK=False, CH=nsp, QUANT=False, num_warps=1)
        tma_attention(q2, descriptors(k, v, bs), cp, pos, S, n, ns, bs, 4, 2, bufs, out, hq, hkv, d, comb)
        keep = [i for i in range(n) if not (n > 10 and i == 3)]
        kk = k[keep].float().repeat_interleave(hq // hkv, dim=1)
        vv = v[keep].float().repeat_interleave(hq // hkv, dim=1)
        ref = torch.einsum("hc,chd->hd", torch.softmax(torch.einsum("hd,chd->hc", q, kk) / math.sqrt(d), -1), vv)
        err = float((out[0] - ref).abs().max())
        worst = max(worst, err)
        print(f"S {S} n {n} splits {ns} BS {bs}: max abs err {err:.2e}", flush=True)
    assert worst < 3e-3, worst
    print("check passed")


TMA = {  # (splits, cells a step, warps, stages)
    16512: [(16, 128, 4, 3), (16, 64, 4, 4), (32, 64, 4, 3), (32, 64, 4, 4), (32, 128, 4, 3), (64, 64, 4, 3),
            (16, 128, 8, 3), (32, 64, 8, 4), (64, 32, 4, 4), (16, 64, 4, 6)],
    4224: [(16, 64, 4, 3), (32, 32, 4, 3), (16, 32, 4, 4), (8, 64, 4, 3)],
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    ap.add_argument("--cells", default="16512,4224")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    if a.check:
        return check()
    check()
    from cuda_attn_layout import D, HKV, HQ, _time, combine, decode_case
    from zinc.backends.cuda.kernels import attention as kattn
    from zinc.backends.cuda.ops import WIDE_BANDWIDTH, attention_config, peak_bandwidth
    rows = []
    for S in (int(s) for s in a.cells.split(",")):
        n = S - 128
        caches, cp, pos, q, q2, scale, nbytes, ref = decode_case(S, n)

        def record(kernel, fn, out, base, **cfg):
            us = _time(fn)
            r = dict(cells=S, kernel=kernel, **cfg, us=us, TBs=nbytes / us / 1e6,
                     err_ref=float((out[0] - ref).abs().max()))
            if base is not None:
                r["err_backend"] = float((out - base).abs().max())
            rows.append(r)
            print(f"{S:6d} {kernel:8s} " + " ".join(f"{k} {v}" for k, v in cfg.items()) + f": {us:7.2f} us "
                  f"{r['TBs']:.2f} TB/s err ref {r['err_ref']:.1e}"
                  + (f" backend {r['err_backend']:.1e}" if "err_backend" in r else ""), flush=True)

        ns, bs, stages, warps = attention_config(S, peak_bandwidth(torch.device("cuda")) >= WIDE_BANDWIDTH)
        out = torch.empty((1, HQ, D), device="cuda")
        scratch = (torch.empty(HQ * ns, device="cuda"), torch.empty(HQ * ns, device="cuda"),
                   torch.empty((HQ * ns, D), device="cuda"))

        def backend(out=out, scratch=scratch, ns=ns, bs=bs, stages=stages, warps=warps):
            for ck, cv in caches:
                kattn.decode_attention(q, ck, cv, pos, cp, S, scale, 0, 0.0, None, scratch, out, nsplit=ns, bs=bs,
                                       stages=stages, warps=warps, exact=False)
        record("backend", backend, out, None, splits=ns, bs=bs, stages=stages, warps=warps)
        base = out.clone()
        for ns, bs, warps, stages in TMA[S]:
            out = torch.empty((1, HQ, D), device="cuda")
            bufs = (torch.empty(HQ * ns, device="cuda"), torch.empty(HQ * ns, device="cuda"),
                    torch.empty((HQ * ns, D), device="cuda"))
            descs = [descriptors(ck, cv, bs) for ck, cv in caches]

            def tma(out=out, bufs=bufs, descs=descs, ns=ns, bs=bs, warps=warps, stages=stages):
                for dsc in descs:
                    tma_attention(q2, dsc, cp, pos, S, n + 1, ns, bs, warps, stages, bufs, out, HQ, HKV, D, combine)
            try:
                record("tma", tma, out, base, splits=ns, bs=bs, warps=warps, stages=stages)
            except Exception as e:  # noqa: BLE001 (a row that does not compile or fit)
                print(f"{S} tma {ns} {bs} {warps} {stages}: {type(e).__name__}: {str(e)[:300]}", flush=True)
        del caches
        torch.cuda.empty_cache()
    if a.out:
        a.out.mkdir(parents=True, exist_ok=True)
        (a.out / "attn-tma.json").write_text(json.dumps(dict(device=torch.cuda.get_device_name(), rows=rows), indent=1))


if __name__ == "__main__":
    main()
