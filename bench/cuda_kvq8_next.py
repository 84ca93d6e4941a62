"""A prototype of the next q8_0 decode split kernel, to check and time against the backend's (not used by it yet).

What `bench/cuda_kvq8_sass.py` found, built as a standalone kernel for one query row (no rope, no sinks):
- K cells as the backend keeps them, (cell, head, dim): one dot per 32-value block on its own int8 tile, the
  block's scale on the partial scores, so the int8 tile stays in the dot operand layout;
- V cells stored by dim, (head, dim, cell): the int8 tile of a block is K-contiguous for P @ V (no byte loads),
  one dot per block into its own accumulator (a tuple), P times the block's scales;
- int8 -> f16 exactly, through the conversion unit or (ASM) by byte permutes (`--asm`).
The split's max, sum and un-normalised output go to the backend's combine kernel.

    python bench/cuda_kvq8_next.py --small      # Triton's interpreter, tiny shapes, against NumPy (no GPU)
    python bench/cuda_kvq8_next.py --sass       # offline sm_90 instruction counts (no GPU)
    python bench/cuda_kvq8_next.py [--out DIR]  # GPU: check, then time against the backend's f16 / q8_0 kernels
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

if "--small" in sys.argv:
    os.environ.setdefault("TRITON_INTERPRET", "1")

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

NEG = tl.constexpr(-1.0e30)


@triton.jit
def _f16(x, ASM: tl.constexpr):
    """int8 -> f16 exactly; with ASM without the conversion unit (x + 128 under the exponent of 1024, less 1152)."""
    if ASM:
        return tl.inline_asm_elementwise(
            "{ .reg .b32 t, c; xor.b32 t, $2, 0x80808080; mov.b32 c, 0x64806480; "
            "prmt.b32 $0, t, 0x64646464, 0x5140; prmt.b32 $1, t, 0x64646464, 0x7362; "
            "sub.f16x2 $0, $0, c; sub.f16x2 $1, $1, c; }",
            "=r,=r,r", [x], dtype=tl.float16, is_pure=True, pack=4)
    return x.to(tl.float16)


@triton.jit
def split_v2(q, kq, kd, vq, vd, kv_pos, m_out, l_out, o_out, S, n_kv, scale, NSPLIT, R: tl.constexpr,
             D: tl.constexpr, DV: tl.constexpr, HKV: tl.constexpr, BM: tl.constexpr, BS: tl.constexpr,
             ASM: tl.constexpr):
    """grid (HKV, NSPLIT): the R query heads of KV head hk (one token at position n_kv - 1) over one range of cells."""
    hk = tl.program_id(0)
    sp = tl.program_id(1)
    NB: tl.constexpr = D // 32
    NBV: tl.constexpr = DV // 32
    r = tl.arange(0, BM)
    rm = r < R
    head = hk * R + r
    i32 = tl.arange(0, 32)
    chunk = tl.cdiv(tl.cdiv(n_kv, NSPLIT), BS) * BS
    start = sp * chunk
    end = tl.minimum(start + chunk, n_kv)
    qh = ()
    ql = ()
    for b in tl.static_range(NB):  # the query rows' blocks as (hi, lo) f16 halves: f32 products on tensor cores
        x = tl.load(q + head[:, None] * D + b * 32 + i32[None, :], mask=rm[:, None], other=0.0)
        h = x.to(tl.float16)
        qh = qh + (h,)
        ql = ql + ((x - h.to(tl.float32)).to(tl.float16),)
    accs = ()
    for b in tl.static_range(NBV):
        accs = accs + (tl.zeros([BM, 32], tl.float32),)
    m_i = tl.full([BM], NEG, tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    for s0 in range(start, end, BS):
        cell = s0 + tl.arange(0, BS)
        cm = cell < end
        ch = cell.to(tl.int64) * HKV + hk
        s = tl.zeros([BM, BS], tl.float32)
        for b in tl.static_range(NB):
            kt = _f16(tl.load(kq + ch[None, :] * D + b * 32 + i32[:, None], mask=cm[None, :], other=0), ASM)
            sb = tl.dot(ql[b], kt, tl.dot(qh[b], kt))
            s += sb * tl.load(kd + ch * NB + b, mask=cm, other=0.0).to(tl.float32)[None, :]
        kp = tl.load(kv_pos + cell, mask=cm, other=-1)
        s = tl.where((kp >= 0)[None, :], s * scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        new = ()
        for b in tl.static_range(NBV):
            row = (hk * DV + b * 32 + i32).to(tl.int64) * S  # V by dim: (head, dim, cell)
            vt = _f16(tl.load(vq + row[None, :] + cell[:, None], mask=cm[:, None], other=0), ASM)
            pb = p * tl.load(vd + (hk * NBV + b) * S + cell, mask=cm, other=0.0).to(tl.float32)[None, :]
            ph = pb.to(tl.float16)
            a = tl.dot(ph, vt, accs[b] * alpha[:, None])
            new = new + (tl.dot((pb - ph.to(tl.float32)).to(tl.float16), vt, a),)
        accs = new
        m_i = m_new
    orow = head * NSPLIT + sp
    tl.store(m_out + orow, m_i, mask=rm)
    tl.store(l_out + orow, l_i, mask=rm)
    for b in tl.static_range(NBV):
        tl.store(o_out + orow[:, None] * DV + b * 32 + i32[None, :], accs[b], mask=rm[:, None])


@triton.jit
def _f32(x, ASM: tl.constexpr):
    """int8 -> f32 exactly; with ASM by byte permutes into the mantissa of 2^23 (x + 128 + 2^23, less 2^23 + 128)."""
    if ASM:
        return tl.inline_asm_elementwise(
            "{ .reg .b32 t; xor.b32 t, $4, 0x80808080; "
            "prmt.b32 $0, t, 0x4b000000, 0x7650; prmt.b32 $1, t, 0x4b000000, 0x7651; "
            "prmt.b32 $2, t, 0x4b000000, 0x7652; prmt.b32 $3, t, 0x4b000000, 0x7653; "
            "sub.f32 $0, $0, 0f4B000080; sub.f32 $1, $1, 0f4B000080; "
            "sub.f32 $2, $2, 0f4B000080; sub.f32 $3, $3, 0f4B000080; }",
            "=r,=r,=r,=r,r", [x], dtype=tl.float32, is_pure=True, pack=4)
    return x.to(tl.float32)


@triton.jit
def split_v3(q, kq, kd, vq, vd, kv_pos, m_out, l_out, o_out, S, n_kv, scale, NSPLIT, R: tl.constexpr,
             D: tl.constexpr, DV: tl.constexpr, HKV: tl.constexpr, RP: tl.constexpr, BS: tl.constexpr,
             ASM: tl.constexpr, ROWS: tl.constexpr = False):
    """The "vector" form, no tensor cores: grid (HKV, NSPLIT), R (<= RP) query rows of KV head hk over one range of
    cells, BS cells a step; every value converted once (int8 -> f32) and scaled by its block's scale, then R FMAs;
    V in the cache's (cell, head, dim) order. Meant for one warp a program (the reductions stay in the warp)."""
    hk = tl.program_id(0)
    sp = tl.program_id(1)
    r = tl.arange(0, RP)
    rm = r < R
    head = hk * R + r
    dd = tl.arange(0, D)
    dv = tl.arange(0, DV)
    chunk = tl.cdiv(tl.cdiv(n_kv, NSPLIT), BS) * BS
    start = sp * chunk
    end = tl.minimum(start + chunk, n_kv)
    qv = tl.load(q + head[:, None] * D + dd[None, :], mask=rm[:, None], other=0.0) * scale
    m_i = tl.full([RP], NEG, tl.float32)
    l_i = tl.zeros([RP], tl.float32)
    acc = tl.zeros([RP, DV], tl.float32)
    for s0 in range(start, end, BS):
        cell = s0 + tl.arange(0, BS)
        cm = cell < end
        ch = cell.to(tl.int64) * HKV + hk
        kt = _f32(tl.load(kq + ch[:, None] * D + dd[None, :], mask=cm[:, None], other=0), ASM)
        ks = tl.load(kd + ch[:, None] * (D // 32) + dd[None, :] // 32, mask=cm[:, None], other=0.0).to(tl.float32)
        kf = kt * ks
        if ROWS:  # one row at a time: 2D tensors only, in the tiles' own layout
            s = tl.zeros([RP, BS], tl.float32)
            for j in tl.static_range(RP):
                qj = tl.sum(tl.where(r[:, None] == j, qv, 0.0), axis=0)
                s = tl.where(r[:, None] == j, tl.sum(kf * qj[None, :], axis=1)[None, :], s)
        else:
            s = tl.sum(qv[:, None, :] * kf[None, :, :], axis=2)  # (RP, BS)
        kp = tl.load(kv_pos + cell, mask=cm, other=-1)
        s = tl.where((kp >= 0)[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        vt = _f32(tl.load(vq + ch[:, None] * DV + dv[None, :], mask=cm[:, None], other=0), ASM)
        vs = tl.load(vd + ch[:, None] * (DV // 32) + dv[None, :] // 32, mask=cm[:, None], other=0.0).to(tl.float32)
        vf = vt * vs
        if ROWS:
            o = tl.zeros([RP, DV], tl.float32)
            for j in tl.static_range(RP):
                pj = tl.sum(tl.where(r[:, None] == j, p, 0.0), axis=0)
                o = tl.where(r[:, None] == j, tl.sum(vf * pj[:, None], axis=0)[None, :], o)
            acc = acc * alpha[:, None] + o
        else:
            acc = acc * alpha[:, None] + tl.sum(p[:, :, None] * vf[None, :, :], axis=1)
        m_i = m_new
    orow = head * NSPLIT + sp
    tl.store(m_out + orow, m_i, mask=rm)
    tl.store(l_out + orow, l_i, mask=rm)
    tl.store(o_out + orow[:, None] * DV + dv[None, :], acc, mask=rm[:, None])


def quantize(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(..., D) f32 -> int8 values and f16 scales of ggml q8_0 blocks (`zinc.gguf.quants.q8_blocks`)."""
    from zinc.gguf.quants import q8_blocks

    d, qv = q8_blocks(x.reshape(-1, 32))
    return qv.reshape(x.shape), d.astype(np.float16).reshape(*x.shape[:-1], -1)


def _split_combine(kernel, args, meta, hq, hkv, dv, nsplit, warps, stages, dev):
    """Launch a split kernel over grid (hkv, nsplit) with (m, l, o) scratch, then the backend's combine -> (1, Hq, DV)."""
    from zinc.backends.cuda.kernels.attention import attn_combine_kernel

    m = torch.empty(hq * nsplit, device=dev)
    l_ = torch.empty(hq * nsplit, device=dev)
    o = torch.empty(hq * nsplit, dv, device=dev)
    out = torch.empty(1, hq, dv, device=dev)
    kernel[(hkv, nsplit)](*args[:6], m, l_, o, *args[6:], **meta, num_warps=warps, num_stages=stages)
    nsp = max(2, triton.next_power_of_2(nsplit))
    dvp = triton.next_power_of_2(dv)
    attn_combine_kernel[(hq, 1)](m, l_, o, m, out, m, m, m, hq, NSPLIT=nsplit, NSP=nsp, DV=dv, DC=dvp, HAS_SINK=False,
                                 CH=min(nsp, max(2, 4096 // dvp)), QUANT=False, num_warps=4 if nsp * dvp >= 4096 else 1)
    return out


def run_v2(q, kq, kd, vq_t, vd_t, kv_pos, n_kv, scale, nsplit, bs, warps, stages, asm, dev):
    """q (1, Hq, D); K cells (S, Hkv, D) + scales; V by dim (Hkv, DV, S) + (Hkv, DV / 32, S) -> (1, Hq, DV)."""
    hq, d = q.shape[1:]
    hkv, dv, s = vq_t.shape
    meta = dict(R=hq // hkv, D=d, DV=dv, HKV=hkv, BM=max(16, triton.next_power_of_2(hq // hkv)), BS=bs, ASM=asm)
    return _split_combine(split_v2, (q, kq, kd, vq_t, vd_t, kv_pos, s, n_kv, scale, nsplit), meta, hq, hkv, dv, nsplit,
                          warps, stages, dev)


def run_v3(q, kq, kd, vq, vd, kv_pos, n_kv, scale, nsplit, bs, warps, stages, asm, dev):
    """q (1, Hq, D); K and V cells (S, Hkv, D) int8 + (S, Hkv, D / 32) f16 scales -> (1, Hq, DV)."""
    hq, d = q.shape[1:]
    s, hkv, dv = vq.shape
    meta = dict(R=hq // hkv, D=d, DV=dv, HKV=hkv, RP=triton.next_power_of_2(hq // hkv), BS=bs, ASM=asm)
    return _split_combine(split_v3, (q, kq, kd, vq, vd, kv_pos, s, n_kv, scale, nsplit), meta, hq, hkv, dv, nsplit,
                          warps, stages, dev)


def case(rng, S, hkv, d, dv, n_kv, dev):
    """Random q8_0 cells (holes included) in both orders, their dequantized f32 values, and one query."""
    k = (3 * rng.standard_normal((S, hkv, d))).astype(np.float32)
    v = rng.standard_normal((S, hkv, dv)).astype(np.float32)
    kq, kd = quantize(k)
    vq, vd = quantize(v)
    pos = np.full(S, -1, np.int32)
    pos[:n_kv] = np.arange(n_kv)
    pos[rng.choice(n_kv, 3, replace=False)] = -1
    kf = kq.astype(np.float32) * np.repeat(kd.astype(np.float32), 32, -1)
    vf = vq.astype(np.float32) * np.repeat(vd.astype(np.float32), 32, -1)
    t = lambda a: torch.from_numpy(np.ascontiguousarray(a)).to(dev)  # noqa: E731
    dev_args = (t(kq), t(kd), t(vq.transpose(1, 2, 0)), t(vd.transpose(1, 2, 0)), t(pos), t(vq), t(vd))
    return dev_args, kf, vf, pos


def reference(q, kf, vf, pos, n_kv, scale):
    hq, d = q.shape[1:]
    hkv = kf.shape[1]
    r = hq // hkv
    s = np.einsum("hrd,shd->hrs", q[0].reshape(hkv, r, d).astype(np.float64), kf[:n_kv].astype(np.float64)) * scale
    s = np.where(pos[:n_kv] >= 0, s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return np.einsum("hrs,shd->hrd", p, vf[:n_kv].astype(np.float64)).reshape(1, hq, -1)


def small() -> None:
    from triton.runtime import interpreter as interp  # loop bounds from tensors (as tests/conftest.py patches)

    patch = interp._patch_lang_tensor

    def patched(tensor):
        patch(tensor)
        tensor.__index__ = lambda self: int(np.asarray(self.handle.data).reshape(-1)[0])

    interp._patch_lang_tensor = patched
    rng = np.random.default_rng(0)
    for S, hq, hkv, d, dv, n_kv, ns, bs in [(53, 6, 2, 64, 32, 41, 3, 16), (40, 8, 2, 32, 64, 40, 2, 16),
                                            (70, 4, 4, 96, 96, 66, 5, 32)]:
        args, kf, vf, pos = case(rng, S, hkv, d, dv, n_kv, "cpu")
        q = rng.standard_normal((1, hq, d)).astype(np.float32)
        got = run_v2(torch.from_numpy(q), *args[:4], args[4], n_kv, 0.3, ns, bs, 4, 1, False, "cpu").numpy()
        want = reference(q, kf, vf, pos, n_kv, 0.3)
        err = np.abs(got - want).max() / np.abs(want).max()
        print(f"v2 S={S} Hq={hq} Hkv={hkv} D={d} DV={dv}: max error {err:.1e} of the largest output", flush=True)
        assert err < 1e-4
        if d & (d - 1) == 0 and dv & (dv - 1) == 0:
            got = run_v3(torch.from_numpy(q), args[0], args[1], args[5], args[6], args[4], n_kv, 0.3, ns, bs, 1, 1,
                         False, "cpu").numpy()
            err = np.abs(got - want).max() / np.abs(want).max()
            print(f"v3 S={S} Hq={hq} Hkv={hkv} D={d} DV={dv}: max error {err:.1e} of the largest output", flush=True)
            assert err < 1e-5


def gpu(out_dir: Path) -> None:
    from triton.testing import do_bench_cudagraph

    from zinc.backends.base import Q8Cells
    from zinc.backends.cuda.kernels import attention as kattn

    dev, hq, hkv, d, layers = "cuda", 32, 8, 128, 36
    rows = []
    for cells in (4096, 16384):
        rng = np.random.default_rng(cells)
        n = cells - 1
        args, kf, vf, pos_np = case(rng, cells, hkv, d, d, n, dev)
        q = rng.standard_normal((1, hq, d)).astype(np.float32)
        qt = torch.from_numpy(q).to(dev)
        want = reference(q, kf, vf, pos_np, n, d ** -0.5)
        vq, vd = (torch.from_numpy(x).to(dev) for x in quantize(vf))  # V in the backend's (cell, head, dim) order
        kf16, vf16 = torch.from_numpy(kf).half().to(dev), torch.from_numpy(vf).half().to(dev)
        pos = args[4]
        # distinct copies a layer (more bytes than the L2), the same values
        v2 = [tuple(x.clone() for x in args[:4]) for _ in range(layers)]
        f16 = [(kf16.clone(), vf16.clone()) for _ in range(layers)]
        q8 = [(Q8Cells(a[0], a[1]), Q8Cells(vq.clone(), vd.clone())) for a in v2]
        q_pos = torch.tensor([n - 1], device=dev, dtype=torch.int32)

        def backend(kv_list, ns, bs, st):
            out = torch.empty(1, hq, d, device=dev)
            scratch = (torch.empty(hq * ns, device=dev), torch.empty(hq * ns, device=dev),
                       torch.empty(hq * ns, d, device=dev))

            def fn():
                for k, v in kv_list:
                    kattn.decode_attention(qt, k, v, q_pos, pos, cells, d ** -0.5, 0, 0.0, None, scratch, out,
                                           nsplit=ns, bs=bs, stages=st)
                return out
            return fn

        def proto(ns, bs, wp, st, asm):
            def fn():
                return [run_v2(qt, *a, pos, n, d ** -0.5, ns, bs, wp, st, asm, dev) for a in v2][0]
            return fn

        variants = [("backend f16", backend(f16, 32, 64, 3)), ("backend q8_0", backend(q8, 32, 128, 2))]
        grid = [(ns, bs, 4, st, True) for ns in (32, 64) for bs in (32, 64, 128) for st in (2, 3, 4)]
        grid += [(32, 64, 4, 3, False), (32, 128, 4, 2, False), (32, 64, 8, 3, True), (32, 128, 8, 2, True),
                 (16, 64, 4, 3, True), (128, 64, 4, 2, True)]
        variants += [(f"v2 ns={c[0]} bs={c[1]} w={c[2]} st={c[3]} asm={c[4]}", proto(*c)) for c in grid]
        for name, fn in variants:
            try:
                got = fn()
                torch.cuda.synchronize()
                err = float(np.abs(got.cpu().numpy() - want).max())
                us = do_bench_cudagraph(fn) * 1e3 / layers
            except Exception as e:  # noqa: BLE001 - a variant that fails is reported, the others still run
                print(f"{cells:6d} {name}: {type(e).__name__}: {e}"[:200], flush=True)
                continue
            nbytes = n * hkv * 2 * (d * 2 if "f16" in name else d + d // 16)
            rows.append({"cells": cells, "variant": name, "us": us, "tb_s": nbytes / us / 1e6, "max_err": err})
            print(f"{cells:6d} {name:40} {us:7.2f} us {nbytes / us / 1e6:5.2f} TB/s err {err:.1e}", flush=True)
    for cells in (4096, 16384):
        best = sorted((r for r in rows if r["cells"] == cells), key=lambda r: r["us"])[:6]
        print(f"fastest at {cells} cells: " + "; ".join(f"{r['variant']} {r['us']:.2f} us" for r in best), flush=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    res = {"device": torch.cuda.get_device_name(), "rows": rows}
    (out_dir / "kvq8-next.json").write_text(json.dumps(res, indent=1))


def sass() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from cuda_kvq8_sass import COUNT, counts

    sig = dict(q="*fp32", kq="*i8", kd="*fp16", vq="*i8", vd="*fp16", kv_pos="*i32", m_out="*fp32", l_out="*fp32",
               o_out="*fp32", S="i32", n_kv="i32", scale="fp32", NSPLIT="i32")
    cols = COUNT + ["LDS.S8/U8", "regs", "stack"]
    print(f"{'v2 split kernel':36}" + "".join(f"{c:>10}" for c in cols))
    for bs, st, asm in [(64, 2, False), (64, 3, True), (128, 2, True)]:
        c = counts(split_v2, sig, dict(R=4, D=128, DV=128, HKV=8, BM=16, BS=bs, ASM=asm), stages=st)
        print(f"{f'bs={bs} stages={st} asm={asm}':36}" + "".join(f"{c[x]:>10}" for x in cols))
    print(f"{'v3 split kernel (vector form)':36}" + "".join(f"{c:>10}" for c in cols + ["SHFL", "FFMA"]))
    for bs, wp, st, asm, rows in [(16, 1, 2, True, False), (32, 1, 2, True, False), (64, 4, 2, True, False),
                                  (16, 1, 2, True, True), (32, 1, 2, True, True), (64, 1, 2, True, True),
                                  (32, 2, 2, True, True), (64, 4, 2, True, True), (128, 4, 2, True, True)]:
        c = counts(split_v3, sig, dict(R=4, D=128, DV=128, HKV=8, RP=4, BS=bs, ASM=asm, ROWS=rows), warps=wp, stages=st,
                   extra=("SHFL", "FFMA"))
        print(f"{f'bs={bs} w={wp} st={st} asm={asm} rows={rows}':36}"
              + "".join(f"{c[x]:>10}" for x in cols + ["SHFL", "FFMA"]))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--sass", action="store_true")
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    a = ap.parse_args()
    small() if a.small else sass() if a.sass else gpu(a.out)
