"""The decode attention's split kernel in two more shapes: like a plain read stream, and in fixed unrolled chunks.

    python bench/cuda_attn_stream.py [--out DIR] [--cells 16512,4224,128]    (on an H100 / H200)
    python bench/cuda_attn_stream.py --loads [--out DIR]                    (loads-only shadows, read ceilings)
    TRITON_INTERPRET=1 python bench/cuda_attn_stream.py --check              (CPU: outputs against PyTorch)

Every way of feeding the backend's split kernel (`kattn.attn_split_kernel`: a few programs a multiprocessor, each
copying (cells x D) tiles into shared memory for tensor-core products) reads a deep cache at 2.2-2.4 TB/s on an
H100, where a plain stream of many small programs reads the same bytes at 2.9 (sessions 25-29). Two other shapes:
- the stream form (`stream_kernel`): one KV head, a short run of cells a program, K and V rows read with plain
  vector loads into registers, no shared memory, no barrier in the loop; the R = 4 query rows' products on the FMA
  units (a score summed over D across lanes), each cell slot of the (BS x D) tile keeping its own online softmax, so
  nothing crosses warps until the loop ends;
- the chunk form (`chunk_kernel`): a fixed, compile-time number of cells a program, the loop unrolled (every step's
  loads can issue at once), tensor-core products on tiles loaded straight into registers.
Both write a split's max, sum and output rows for the backend's combine.

Qwen3-8B's shapes (32 query heads, 8 KV heads, head dim 128, f16 cells), one token, q already rotated (no rope
prologue on either side). Rows: the backend's split + combine at its own split row (and at 4 warps), each form at
several (cells a program, cells a step, warps, stages), and a loads-only shadow of the stream form; each timed over
36 layers' caches in turn (median of a replayed CUDA graph, µs a layer; TB/s of the K + V bytes in use) and checked
against the backend's output and an f32 reference. --loads: shadows that only read (the stream form's, (cells x D)
tiles at a compile-time trip count, cell-major and head-major cells) against contiguous reads of the same bytes.
Session 30 (H100, bench/RESULTS.md): the stream form is bound by its FMA work (37.9 µs against 28.8 at 16,512
cells); the chunk form ties at depth and wins at 4,224 and 128 cells, which led to the backend's unrolled loop.
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

from cuda_attn_layout import D, HKV, HQ, LAYERS, _time, combine, decode_case, reference  # noqa: E402
from zinc.backends.cuda.kernels import attention as kattn  # noqa: E402

R = HQ // HKV
NEG = tl.constexpr(-1.0e30)


@triton.jit
def _slot_step(s, vis, vt, m, l, a):
    """One step of a cell slot's online softmax (base 2): scores s (BS,), values vt (BS, D)."""
    s = tl.where(vis, s, NEG)
    mn = tl.maximum(m, s)
    al = tl.exp2(m - mn)
    p = tl.where(vis, tl.exp2(s - mn), 0.0)
    return mn, l * al + p, a * al[:, None] + p[:, None] * vt


@triton.jit
def _slot_merge(m, l, a, row, m_out, l_out, o_out, dd, D: tl.constexpr):
    mx = tl.max(m, axis=0)
    w = tl.exp2(m - mx)
    tl.store(m_out + row, mx * 0.6931471805599453)
    tl.store(l_out + row, tl.sum(l * w, axis=0))
    tl.store(o_out + row * D + dd, tl.sum(a * w[:, None], axis=0))


@triton.jit
def stream_kernel(q, k, v, kv_pos, q_pos, m_out, l_out, o_out, n_kv, S, CHUNK, NSPLIT, HKV: tl.constexpr,
                  D: tl.constexpr, BS: tl.constexpr, LOADS: tl.constexpr, HM: tl.constexpr = False):
    """Split program_id(1) (cells [sp * CHUNK, +CHUNK)) of KV head program_id(0), its R = 4 query rows of q (HQ, D)
    f32, already times the score scale in base 2. Writes the split's max (natural-log units), sum and
    un-normalised output rows (head * NSPLIT + sp) as `attn_split_kernel` does. LOADS: only read and sum the
    tiles (into o_out's first row of the split). HM: head-major cells ((HKV, S, D) memory seen as (S, HKV, D))."""
    hk = tl.program_id(0)
    sp = tl.program_id(1)
    dd = tl.arange(0, D)
    c = tl.arange(0, BS)
    h0 = hk * 4
    q0 = tl.load(q + (h0 + 0) * D + dd)
    q1 = tl.load(q + (h0 + 1) * D + dd)
    q2 = tl.load(q + (h0 + 2) * D + dd)
    q3 = tl.load(q + (h0 + 3) * D + dd)
    qp = tl.load(q_pos + 0)
    n = tl.minimum(tl.minimum(n_kv, S), qp + 1)
    start = sp * CHUNK
    end = tl.minimum(start + CHUNK, n)
    m0 = tl.full([BS], NEG, tl.float32)
    m1, m2, m3 = m0, m0, m0
    l0 = tl.zeros([BS], tl.float32)
    l1, l2, l3 = l0, l0, l0
    a0 = tl.zeros([BS, D], tl.float32)
    a1, a2, a3 = a0, a0, a0
    for s0 in range(start, end, BS):
        cell = s0 + c
        cm = cell < end
        if HM:
            off = (hk.to(tl.int64) * S + cell) * D
        else:
            off = (cell.to(tl.int64) * HKV + hk) * D
        kt = tl.load(k + off[:, None] + dd[None, :], mask=cm[:, None], other=0.0).to(tl.float32)
        vt = tl.load(v + off[:, None] + dd[None, :], mask=cm[:, None], other=0.0).to(tl.float32)
        if LOADS:
            a0 += kt + vt
        else:
            kp = tl.load(kv_pos + cell, mask=cm, other=-1)
            vis = (kp >= 0) & (kp <= qp)
            m0, l0, a0 = _slot_step(tl.sum(kt * q0[None, :], axis=1), vis, vt, m0, l0, a0)
            m1, l1, a1 = _slot_step(tl.sum(kt * q1[None, :], axis=1), vis, vt, m1, l1, a1)
            m2, l2, a2 = _slot_step(tl.sum(kt * q2[None, :], axis=1), vis, vt, m2, l2, a2)
            m3, l3, a3 = _slot_step(tl.sum(kt * q3[None, :], axis=1), vis, vt, m3, l3, a3)
    if LOADS:
        tl.store(o_out + (h0 * NSPLIT + sp) * D + dd, tl.sum(a0, axis=0))
    else:
        _slot_merge(m0, l0, a0, (h0 + 0) * NSPLIT + sp, m_out, l_out, o_out, dd, D)
        _slot_merge(m1, l1, a1, (h0 + 1) * NSPLIT + sp, m_out, l_out, o_out, dd, D)
        _slot_merge(m2, l2, a2, (h0 + 2) * NSPLIT + sp, m_out, l_out, o_out, dd, D)
        _slot_merge(m3, l3, a3, (h0 + 3) * NSPLIT + sp, m_out, l_out, o_out, dd, D)


@triton.jit
def tile_step(qv, kt, vt, kp, qp, m_i, l_i, acc):
    """One (BS x D) tile of K and V (cell positions kp; -1 empty) into the online softmax (base 2) of the query rows
    qv (f16, pre-scaled) at position qp: the new max, sum and un-normalised output rows."""
    vis = (kp >= 0) & (kp <= qp)
    sc = tl.where(vis[None, :], tl.dot(qv, tl.trans(kt)), NEG)
    m_new = tl.maximum(m_i, tl.max(sc, axis=1))
    p = tl.where(vis[None, :], tl.exp2(sc - m_new[:, None]), 0.0)
    alpha = tl.exp2(m_i - m_new)
    return m_new, l_i * alpha + tl.sum(p, axis=1), tl.dot(p.to(tl.float16), vt, acc * alpha[:, None])


@triton.jit
def split_store(m_i, l_i, acc, row, rm, m_out, l_out, o_out, dd, D: tl.constexpr):
    """A split's max (natural-log units), sum and output rows, as `attn_split_kernel` writes them for the combine."""
    tl.store(m_out + row, m_i * 0.6931471805599453, mask=rm)
    tl.store(l_out + row, l_i, mask=rm)
    tl.store(o_out + row[:, None] * D + dd[None, :], acc, mask=rm[:, None])


@triton.jit
def chunk_kernel(q, k, v, kv_pos, q_pos, m_out, l_out, o_out, n_kv, S, NSPLIT, HKV: tl.constexpr, R: tl.constexpr,
                 D: tl.constexpr, BM: tl.constexpr, CHUNK: tl.constexpr, BS: tl.constexpr):
    """Split program_id(1) = cells [sp * CHUNK, +CHUNK) of KV head program_id(0), a trip count known at compile
    time (CHUNK / BS steps, unrolled, so every step's loads can issue at once): tensor-core products of the R
    query rows (padded to BM) with each (BS x D) tile of K and V read straight from memory into registers.
    Writes the split's max (natural-log units), sum and un-normalised output as `attn_split_kernel` does."""
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
    m_i = tl.full([BM], NEG, tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    for s0 in tl.static_range(0, CHUNK, BS):
        cell = sp * CHUNK + s0 + c
        cm = cell < n
        off = (cell.to(tl.int64) * HKV + hk) * D
        kt = tl.load(k + off[:, None] + dd[None, :], mask=cm[:, None], other=0.0)
        vt = tl.load(v + off[:, None] + dd[None, :], mask=cm[:, None], other=0.0)
        kp = tl.load(kv_pos + cell, mask=cm, other=-1)
        m_i, l_i, acc = tile_step(qv, kt, vt, kp, qp, m_i, l_i, acc)
    split_store(m_i, l_i, acc, head * NSPLIT + sp, rm, m_out, l_out, o_out, dd, D)


def chunk_attention(q2, ck, cv, cp, pos, S, n, chunk, bs, warps, stages, bufs, out) -> int:
    ns = triton.cdiv(n, chunk)
    m, l, o = bufs
    chunk_kernel[(HKV, ns)](q2, ck, cv, cp, pos, m, l, o, n, S, ns, HKV=HKV, R=R, D=D, BM=16, CHUNK=chunk, BS=bs,
                            num_warps=warps, num_stages=stages)
    combine(m, l, o, out, ns)
    return ns


def stream_attention(q2, ck, cv, cp, pos, S, n, chunk, bs, warps, stages, bufs, out, loads=False, hm=False) -> int:
    """q2 (HQ, D) pre-scaled (base 2); returns the number of splits."""
    ns = triton.cdiv(n, chunk)
    m, l, o = bufs
    stream_kernel[(HKV, ns)](q2, ck, cv, cp, pos, m, l, o, n, S, chunk, ns, HKV=HKV, D=D, BS=bs, LOADS=loads,
                             HM=hm, num_warps=warps, num_stages=stages)
    if not loads:
        combine(m, l, o, out, ns)
    return ns


def check() -> None:
    """Interpreter (or GPU) check of the stream form against PyTorch at odd sizes, with masked cells."""
    dev = "cuda" if torch.cuda.is_available() and not os.environ.get("TRITON_INTERPRET") else "cpu"
    if dev == "cpu":  # the interpreter's loop bounds need the test suite's patch
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        import conftest  # noqa: F401
    g = torch.Generator(device=dev).manual_seed(1)
    worst = 0.0
    for S, n, chunk, bs in ((37, 37, 16, 8), (70, 53, 32, 16), (130, 129, 64, 16), (20, 5, 64, 16), (99, 99, 24, 8)):
        k = torch.randn(S, HKV, D, device=dev, generator=g).half()
        v = torch.randn(S, HKV, D, device=dev, generator=g).half()
        q = torch.randn(HQ, D, device=dev, generator=g)
        cp = torch.full((S,), -1, dtype=torch.int32, device=dev)
        cp[:n] = torch.arange(n, dtype=torch.int32, device=dev)
        if n > 10:
            cp[3] = n + 5  # a cell from the future: masked
        pos = torch.tensor([n - 1], dtype=torch.int32, device=dev)
        q2 = (q / math.sqrt(D) * 1.4426950408889634).contiguous()
        ns = triton.cdiv(n, chunk)
        bufs = (torch.empty(HQ * ns, device=dev), torch.empty(HQ * ns, device=dev),
                torch.empty((HQ * ns, D), device=dev))
        out = torch.empty((1, HQ, D), device=dev)
        stream_attention(q2, k, v, cp, pos, S, n, chunk, bs, 4, 1, bufs, out)
        out2 = torch.empty((1, HQ, D), device=dev)
        cb = max(16, bs)
        ns2 = triton.cdiv(n, 2 * cb)
        bufs2 = (torch.empty(HQ * ns2, device=dev), torch.empty(HQ * ns2, device=dev),
                 torch.empty((HQ * ns2, D), device=dev))
        chunk_attention(q2, k, v, cp, pos, S, n, 2 * cb, cb, 4, 1, bufs2, out2)
        keep = [i for i in range(n) if not (n > 10 and i == 3)]
        ref = reference(q, k[keep], v[keep], len(keep))
        err = float((out[0] - ref).abs().max())
        err2 = float((out2[0] - ref).abs().max())
        worst = max(worst, err, err2)
        print(f"S {S} n {n} chunk {chunk} BS {bs}: max abs err {err:.2e}; chunk kernel ({2 * cb} cells a program) "
              f"{err2:.2e}", flush=True)
    assert worst < 3e-3, worst
    print("check passed")


STREAM = {  # (cells a program, cells a step, warps, stages); session 30's first call had more rows
    16512: [(512, 32, 4, 1), (256, 8, 2, 1)],
    4224: [(128, 16, 4, 1)],
    128: [(16, 8, 2, 1)],
}
CHUNK = {  # (cells a program, cells a step, warps, stages)
    16512: [(64, 64, 4, 1), (128, 64, 4, 1), (128, 128, 4, 1), (64, 32, 4, 1), (128, 32, 4, 1), (256, 64, 4, 1),
            (128, 64, 8, 1), (64, 64, 8, 1), (32, 32, 4, 1), (256, 128, 8, 1)],
    4224: [(64, 64, 4, 1), (32, 32, 4, 1), (128, 64, 4, 1), (64, 32, 4, 1)],
    128: [(32, 32, 4, 1), (16, 16, 4, 1), (64, 64, 4, 1), (32, 16, 4, 1)],
}


def run_case(S: int, n: int, rows: list, backend_rows=None) -> None:
    """backend_rows: (splits, cells a step, stages, warps) rows of the backend's kernel to time instead of its own
    row and the two forms here (stages 0: its unrolled loop)."""
    caches, cp, pos, q, q2, scale, nbytes, ref = decode_case(S, n)
    from zinc.backends.cuda.ops import attention_config

    def record(kernel, fn, out=None, base=None, **cfg):
        us = _time(fn)
        r = dict(cells=S, tokens=n + 1, kernel=kernel, **cfg, us=us, TBs=nbytes / us / 1e6)
        if out is not None:
            r["err_ref"] = float((out[0] - ref).abs().max())
            if base is not None:
                r["err_backend"] = float((out - base).abs().max())
        rows.append(r)
        print(f"{S:6d} {kernel:8s} " + " ".join(f"{k} {v}" for k, v in cfg.items()) + f": {us:7.2f} us "
              f"{r['TBs']:.2f} TB/s" + (f" err ref {r['err_ref']:.1e}" if out is not None else "")
              + (f" backend {r['err_backend']:.1e}" if "err_backend" in r else ""), flush=True)

    base = None
    ns0, bs0, st0, w0 = attention_config(S)
    for ns, bs, stages, warps in backend_rows or ((ns0, bs0, st0, w0), (ns0, bs0, st0, 4)):
        out = torch.empty((1, HQ, D), device="cuda")
        scratch = (torch.empty(HQ * ns, device="cuda"), torch.empty(HQ * ns, device="cuda"),
                   torch.empty((HQ * ns, D), device="cuda"))

        def backend(out=out, scratch=scratch, ns=ns, bs=bs, stages=stages, warps=warps):
            for ck, cv in caches:
                kattn.decode_attention(q, ck, cv, pos, cp, S, scale, 0, 0.0, None, scratch, out, nsplit=ns, bs=bs,
                                       stages=stages, warps=warps, exact=False)
        try:
            record("backend", backend, out, base, splits=ns, bs=bs, stages=stages, warps=warps)
        except Exception as e:  # noqa: BLE001 (a row that does not compile or fit)
            print(f"{S} backend {ns} {bs} {stages} {warps}: {type(e).__name__}: {str(e)[:200]}", flush=True)
            continue
        base = out.clone() if base is None else base
    if backend_rows:
        del caches
        torch.cuda.empty_cache()
        return
    for chunk, bs, warps, stages in CHUNK[S]:
        ns = triton.cdiv(n + 1, chunk)
        out = torch.empty((1, HQ, D), device="cuda")
        bufs = (torch.empty(HQ * ns, device="cuda"), torch.empty(HQ * ns, device="cuda"),
                torch.empty((HQ * ns, D), device="cuda"))

        def chunked(out=out, bufs=bufs, chunk=chunk, bs=bs, warps=warps, stages=stages):
            for ck, cv in caches:
                chunk_attention(q2, ck, cv, cp, pos, S, n + 1, chunk, bs, warps, stages, bufs, out)
        try:
            record("chunk", chunked, out, base, chunk=chunk, splits=ns, bs=bs, warps=warps, stages=stages)
        except Exception as e:  # noqa: BLE001 (a configuration that does not compile or fit)
            print(f"{S} chunk {chunk} {bs} {warps} {stages}: {type(e).__name__}: {str(e)[:200]}", flush=True)
    for loads in (False, True):
        for chunk, bs, warps, stages in STREAM[S]:
            ns = triton.cdiv(n + 1, chunk)
            out = torch.empty((1, HQ, D), device="cuda")
            bufs = (torch.empty(HQ * ns, device="cuda"), torch.empty(HQ * ns, device="cuda"),
                    torch.empty((HQ * ns, D), device="cuda"))

            def stream(out=out, bufs=bufs, chunk=chunk, bs=bs, warps=warps, stages=stages, loads=loads):
                for ck, cv in caches:
                    stream_attention(q2, ck, cv, cp, pos, S, n + 1, chunk, bs, warps, stages, bufs, out, loads)
            try:
                record("loads" if loads else "stream", stream, None if loads else out, None if loads else base,
                       chunk=chunk, splits=ns, bs=bs, warps=warps, stages=stages)
            except Exception as e:  # noqa: BLE001 (a configuration that does not compile or fit)
                print(f"{S} stream {chunk} {bs} {warps} {stages}: {type(e).__name__}: {str(e)[:200]}", flush=True)
    del caches
    torch.cuda.empty_cache()


@triton.jit
def _pair_kernel(a, b, out, n, CHUNK: tl.constexpr, STEP: tl.constexpr, CVT: tl.constexpr):
    """A contiguous read of two arrays at once (CHUNK elements of each a program), summed; CVT: each element
    converted to f32 first (as the split kernel's f16 cells), else summed in its own type."""
    base = tl.program_id(0).to(tl.int64) * CHUNK
    acc = tl.zeros([STEP], dtype=tl.float32 if CVT else a.dtype.element_ty)
    for o in range(0, CHUNK, STEP):
        i = base + o + tl.arange(0, STEP)
        x = tl.load(a + i, mask=i < n, other=0)
        y = tl.load(b + i, mask=i < n, other=0)
        if CVT:
            acc += x.to(tl.float32) + y.to(tl.float32)
        else:
            acc += x + y
    tl.store(out + tl.program_id(0), tl.sum(acc).to(tl.float32))


@triton.jit
def _tile_loads(k, v, out, n, S, NSPLIT, HKV: tl.constexpr, D: tl.constexpr, CHUNK: tl.constexpr, BS: tl.constexpr,
                HM: tl.constexpr, FLAT: tl.constexpr, CVT: tl.constexpr):
    """Split program_id(1) of head program_id(0) reads its CHUNK cells' K and V rows BS cells a step (a trip count
    known at compile time, masked past n) and sums them. FLAT (head-major only): the tile loaded as one flat run of
    BS * D values. CVT: summed in f32."""
    hk = tl.program_id(0)
    sp = tl.program_id(1)
    c = tl.arange(0, BS)
    dd = tl.arange(0, D)
    acc = tl.zeros([BS * D] if FLAT else [BS, D], tl.float32 if CVT else tl.float16)
    for s0 in range(0, CHUNK, BS):
        cell = sp * CHUNK + s0 + c
        if FLAT:
            f = tl.arange(0, BS * D)
            i = (hk.to(tl.int64) * S + sp * CHUNK + s0) * D + f
            fm = (sp * CHUNK + s0) * D + f < n * D
            kt = tl.load(k + i, mask=fm, other=0.0)
            vt = tl.load(v + i, mask=fm, other=0.0)
        else:
            if HM:
                off = (hk.to(tl.int64) * S + cell) * D
            else:
                off = (cell.to(tl.int64) * HKV + hk) * D
            cm = (cell < n)[:, None]
            kt = tl.load(k + off[:, None] + dd[None, :], mask=cm, other=0.0)
            vt = tl.load(v + off[:, None] + dd[None, :], mask=cm, other=0.0)
        if CVT:
            acc += kt.to(tl.float32) + vt.to(tl.float32)
        else:
            acc += kt + vt
    tl.store(out + hk * NSPLIT + sp, tl.sum(acc.to(tl.float32)))


TILE_LOADS = [(128, 32, 4, 1, False, True), (128, 32, 4, 3, False, True), (128, 32, 4, 3, False, False),
              (128, 16, 4, 3, False, True), (128, 64, 4, 3, False, True), (256, 32, 4, 3, False, True),
              (128, 32, 4, 3, True, True), (128, 16, 4, 3, True, True), (64, 16, 4, 3, False, True),
              (128, 32, 8, 3, False, True)]


def loads_sweep(rows: list) -> None:
    """The stream form's loads-only shadow at 16,512 cells, cell-major and head-major cells, against one contiguous
    read of the same bytes."""
    from cuda_read_ceiling import _sum_kernel

    S, n = 16512, 16384
    nbytes = (n + 1) * HKV * D * 2 * 2
    g = torch.Generator(device="cuda").manual_seed(0)
    o = torch.empty((HQ * 1100, D), device="cuda")
    cp = torch.zeros(S, dtype=torch.int32, device="cuda")
    pos = torch.tensor([n], dtype=torch.int32, device="cuda")
    for hm in (False, True):
        if hm:
            caches = [tuple(torch.randn(HKV, S, D, device="cuda", generator=g).half().permute(1, 0, 2)
                            for _ in range(2)) for _ in range(LAYERS)]
        else:
            caches = [tuple(torch.randn(S, HKV, D, device="cuda", generator=g).half() for _ in range(2))
                      for _ in range(LAYERS)]
        for chunk, bs, warps in ((128, 16, 4), (128, 32, 4)):
            def fn(chunk=chunk, bs=bs, warps=warps):
                for ck, cv in caches:
                    stream_attention(o, ck, cv, cp, pos, S, n + 1, chunk, bs, warps, 1, (o, o, o), None, True, hm)
            us = _time(fn)
            rows.append(dict(kernel="loads", head_major=hm, chunk=chunk, bs=bs, warps=warps, us=us,
                             TBs=nbytes / us / 1e6))
            print(f"loads {'head' if hm else 'cell'}-major chunk {chunk} bs {bs} warps {warps}: {us:6.2f} us "
                  f"{nbytes / us / 1e6:.2f} TB/s", flush=True)
        for chunk, bs, warps, stages, flat, cvt in TILE_LOADS:
            if flat and not hm:
                continue
            ns = triton.cdiv(n + 1, chunk)

            def tiles(chunk=chunk, bs=bs, warps=warps, stages=stages, flat=flat, cvt=cvt, ns=ns):
                for ck, cv in caches:
                    _tile_loads[(HKV, ns)](ck, cv, o, n + 1, S, ns, HKV=HKV, D=D, CHUNK=chunk, BS=bs, HM=hm, FLAT=flat,
                                           CVT=cvt, num_warps=warps, num_stages=stages)
            us = _time(tiles)
            rows.append(dict(kernel="tile loads", head_major=hm, chunk=chunk, bs=bs, warps=warps, stages=stages,
                             flat=flat, cvt=cvt, us=us, TBs=nbytes / us / 1e6))
            print(f"tile loads {'head' if hm else 'cell'}-major chunk {chunk} bs {bs} warps {warps} stages {stages} "
                  f"flat {flat} cvt {cvt}: {us:6.2f} us {nbytes / us / 1e6:.2f} TB/s", flush=True)
        del caches
    flat = [torch.randint(0, 100, (nbytes // 4,), dtype=torch.int32, device="cuda") for _ in range(LAYERS)]
    parts = torch.empty(triton.cdiv(nbytes // 4, 2048), dtype=torch.int32, device="cuda")
    for chunk, step, nw in ((8192, 1024, 4), (4096, 1024, 2), (2048, 512, 1)):
        def stream(chunk=chunk, step=step, nw=nw):
            for x in flat:
                _sum_kernel[(triton.cdiv(x.numel(), chunk),)](x, parts, x.numel(), CHUNK=chunk, STEP=step,
                                                               num_warps=nw)
        us = _time(stream)
        rows.append(dict(kernel="stream", chunk=chunk, step=step, warps=nw, us=us, TBs=nbytes / us / 1e6))
        print(f"contiguous stream chunk {chunk} step {step} warps {nw}: {us:6.2f} us {nbytes / us / 1e6:.2f} TB/s")
    del flat
    pf = torch.empty(triton.cdiv(nbytes, 512), device="cuda")
    pairs = [tuple(torch.randn(nbytes // 4, device="cuda", generator=g).half() for _ in range(2)) for _ in range(LAYERS)]
    for how, chunk, step, nw in (("f16 cvt", 8192, 2048, 4), ("f16 cvt", 16384, 2048, 4), ("f16 cvt", 4096, 1024, 2),
                                 ("f16", 8192, 2048, 4), ("i32 view", 4096, 1024, 4), ("i32 view", 2048, 512, 2)):
        def pair(how=how, chunk=chunk, step=step, nw=nw):
            for x, y in pairs:
                if how == "i32 view":
                    x, y = x.view(torch.int32), y.view(torch.int32)
                _pair_kernel[(triton.cdiv(x.numel(), chunk),)](x, y, pf, x.numel(), CHUNK=chunk, STEP=step,
                                                               CVT=how == "f16 cvt", num_warps=nw)
        us = _time(pair)
        rows.append(dict(kernel="pair", how=how, chunk=chunk, step=step, warps=nw, us=us, TBs=nbytes / us / 1e6))
        print(f"two contiguous arrays, {how}, chunk {chunk} step {step} warps {nw}: {us:6.2f} us "
              f"{nbytes / us / 1e6:.2f} TB/s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    ap.add_argument("--cells", default="16512,4224,128")
    ap.add_argument("--check", action="store_true", help="outputs against PyTorch at small sizes only")
    ap.add_argument("--loads", action="store_true", help="only the loads-only shadow's sweep (both cell layouts)")
    ap.add_argument("--rows", help="only these rows of the backend's kernel: a Python list of (splits, cells a step, "
                    "stages, warps); stages 0: its unrolled loop")
    a = ap.parse_args()
    if a.check:
        return check()
    rows: list = []
    if a.loads:
        loads_sweep(rows)
    else:
        check()
        import ast

        for S in (int(s) for s in a.cells.split(",")):
            run_case(S, S - 128 if S > 256 else S - 1, rows, ast.literal_eval(a.rows) if a.rows else None)
    if a.out:
        a.out.mkdir(parents=True, exist_ok=True)
        (a.out / "attn-stream.json").write_text(json.dumps(dict(device=torch.cuda.get_device_name(), rows=rows),
                                                           indent=1))


if __name__ == "__main__":
    main()
