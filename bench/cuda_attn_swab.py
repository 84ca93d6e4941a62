"""The decode attention's split loop with the cells as the MMA's long side: TMA tiles and warp-group MMAs.

    python bench/cuda_attn_swab.py [--out DIR]      (on an H100 / H200)

The backend's split kernel (`kattn.attn_split_kernel`) multiplies its query rows (16, padded from 4) by a K tile
with Ampere-style MMAs: every K and V tile goes from shared memory into registers before each product, and its
loads are cp.async copies issued by the program's warps. Here the product is turned around, S^T = K Q^T and
O^T = V^T P^T, so a tile of BS cells is the (BS x D) operand that Hopper's warp-group MMA reads straight from
shared memory, where a TMA copy (a host tensor descriptor of the cells viewed as (S, Hkv x D)) put it; only the
(BS x 16) scores and the (DV x 16) accumulator live in registers, and P^T goes back through shared memory as the
second product's other operand.

Qwen3-8B's shapes (32 query heads, 8 KV heads, head dim 128, f16 cells), one token, q already rotated (both
kernels without the rope prologue), the backend's combine after either. Each row is timed over 36 layers' caches
in turn (the L2 holds none; median of a replayed CUDA graph, µs a layer; TB/s of the K + V bytes in use), with
a loads-only TMA shadow (the same grid and tiles, summed), and the backend's own kernel with and without its TMA form
(`kattn.decode_attention(tma=True)`, which is this loop inside the split kernel), also with the rope prologue and
KV write the decode step has. The TMA form is no longer in the backend (no faster on an H100, session 29): its rows
need `git apply bench/wip/attn-tma-swab.patch` first, and fail one by one without it. Checks every configuration's
output against the backend kernel's (max abs difference) and an f32 PyTorch reference. Prints its rows as it goes;
--out writes attn-swab.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).parent))

from cuda_attn_layout import D, HKV, HQ, _split, _time, combine, decode_case  # noqa: E402
from zinc.backends.cuda.kernels import attention as kattn  # noqa: E402

R = HQ // HKV
NEG = tl.constexpr(-1.0e30)


@triton.jit
def swab_kernel(q, kdesc, vdesc, kv_pos, q_pos, m_out, l_out, o_out, n_kv, S, NSPLIT, R: tl.constexpr,
                D: tl.constexpr, DV: tl.constexpr, BM: tl.constexpr, BS: tl.constexpr, LAZY_L: tl.constexpr,
                WS: tl.constexpr = False):
    """Split program_id(1) of KV head program_id(0): q (HQ, D) f32 rows already times the score scale in base 2;
    writes the split's max (natural-log units), sum and un-normalised output as `attn_split_kernel` does.
    LAZY_L: the softmax's sum kept per (cell, row) and reduced once after the loop (one cross-warp reduction a
    step fewer). WS: Triton's automatic warp specialization of the loop (see `offline`)."""
    hk = tl.program_id(0)
    sp = tl.program_id(1)
    i = tl.arange(0, BM)
    rm = i < R
    head = hk * R + i
    dd = tl.arange(0, D)
    dv = tl.arange(0, DV)
    qv = tl.load(q + head[:, None] * D + dd[None, :], mask=rm[:, None], other=0.0)
    qT = tl.trans(qv.to(tl.float16))  # (D, BM)
    q0 = tl.load(q_pos)
    start, end = _split(tl.minimum(tl.minimum(n_kv, S), q0 + 1), NSPLIT, BS, sp)
    c = tl.arange(0, BS)
    m_i = tl.full([BM], NEG, tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    lp = tl.zeros([BS, BM], tl.float32)
    accT = tl.zeros([DV, BM], tl.float32)
    for s0 in tl.range(start, end, BS, warp_specialize=WS):
        kt = kdesc.load([s0, hk * D])  # (BS, D): cells past S read as 0
        vt = vdesc.load([s0, hk * DV])  # (BS, DV)
        kp = tl.load(kv_pos + s0 + c, mask=s0 + c < end, other=-1)
        sT = tl.dot(kt, qT)  # (BS, BM)
        vis = (kp >= 0) & (kp <= q0)
        sT = tl.where(vis[:, None], sT, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(sT, axis=0))
        p = tl.exp2(sT - m_new[None, :])
        alpha = tl.exp2(m_i - m_new)
        if LAZY_L:
            lp = lp * alpha[None, :] + p
        else:
            l_i = l_i * alpha + tl.sum(p, axis=0)
        accT = tl.dot(tl.trans(vt), p.to(tl.float16), accT * alpha[None, :])
        m_i = m_new
    if LAZY_L:
        l_i = tl.sum(lp, axis=0)
    row = head * NSPLIT + sp
    tl.store(m_out + row, m_i * 0.6931471805599453, mask=rm)
    tl.store(l_out + row, l_i, mask=rm)
    tl.store(o_out + row[None, :] * DV + dv[:, None], accT, mask=rm[None, :])


@triton.jit
def tma_loads_kernel(kdesc, vdesc, out, n, NSPLIT, D: tl.constexpr, BS: tl.constexpr):
    """The swab kernel's TMA tile loads alone (same grid and tiles), summed."""
    hk = tl.program_id(0)
    sp = tl.program_id(1)
    start, end = _split(n, NSPLIT, BS, sp)
    acc = tl.zeros([D], tl.float32)
    for s0 in range(start, end, BS):
        kt = kdesc.load([s0, hk * D])
        vt = vdesc.load([s0, hk * D])
        acc += tl.sum(kt.to(tl.float32) + vt.to(tl.float32), axis=0)
    tl.store(out + (hk * NSPLIT + sp) * D + tl.arange(0, D), acc)


def run_case(S: int, n: int, cfgs, rows: list) -> None:
    """Cache of S cells holding n tokens (the new one's cell n included as written)."""
    caches, cp, pos, q, q2, scale, nbytes, ref = decode_case(S, n)

    def record(kernel, fn, out=None, **cfg):
        us = _time(fn)
        r = dict(cells=S, tokens=n + 1, kernel=kernel, **cfg, us=us, TBs=nbytes / us / 1e6)
        if out is not None:
            r["err_ref"] = float((out[0] - ref).abs().max())
        rows.append(r)
        print(f"{S:6d} {kernel:10s} " + " ".join(f"{k} {v}" for k, v in cfg.items())
              + f": {us:7.2f} us {r['TBs']:.2f} TB/s" + (f" err {r['err_ref']:.2e}" if out is not None else ""),
              flush=True)

    base_out, rope_out = None, None
    qw, kn, kw, vn = (torch.randn(*sh, device="cuda", generator=g) for sh in ((D,), (1, HKV, D), (D,), (1, HKV, D)))
    c = torch.pow(1e6, -torch.arange(0, D // 2, device="cuda", dtype=torch.float32) / (D // 2))
    for ns, bs, stages, warps, tma, rope in cfgs["backend"]:
        out = torch.empty((1, HQ, D), device="cuda")
        scratch = (torch.empty(HQ * ns, device="cuda"), torch.empty(HQ * ns, device="cuda"),
                   torch.empty((HQ * ns, D), device="cuda"))
        rp = (qw, kn, kw, vn, c, None, 1e-6, 1.0, D, True, True) if rope else None

        def backend(out=out, scratch=scratch, ns=ns, bs=bs, stages=stages, warps=warps, tma=tma, rp=rp):
            for ck, cv in caches:
                kattn.decode_attention(q, ck, cv, pos, cp, S, scale, 0, 0.0, None, scratch, out, nsplit=ns, bs=bs,
                                       stages=stages, warps=warps, exact=False, rope=rp,
                                       **({"tma": True} if tma else {}))
        try:
            record("backend", backend, None if rope else out, splits=ns, bs=bs, stages=stages, warps=warps, tma=tma,
                   rope=rope)
        except Exception as e:  # noqa: BLE001
            print(f"{S} backend {ns} {bs} {stages} {warps} {tma} {rope}: {type(e).__name__}: {str(e)[:200]}")
            continue
        first = rope_out if rope else base_out
        if first is None:
            if rope:
                rope_out = out.clone()
            else:
                base_out = out.clone()
        else:
            rows[-1]["err_backend"] = float((out - first).abs().max())
            print(f"    against the first row of its kind: {rows[-1]['err_backend']:.2e}")
    for ns, bs, stages, warps, lazy in cfgs["swab"]:
        out = torch.empty((1, HQ, D), device="cuda")
        m, l, o = (torch.empty(HQ * ns, device="cuda"), torch.empty(HQ * ns, device="cuda"),
                   torch.empty((HQ * ns, D), device="cuda"))
        descs = [(TensorDescriptor.from_tensor(ck.view(S, HKV * D), [bs, D]),
                  TensorDescriptor.from_tensor(cv.view(S, HKV * D), [bs, D])) for ck, cv in caches]

        def swab(out=out, m=m, l=l, o=o, descs=descs, ns=ns, bs=bs, stages=stages, warps=warps, lazy=lazy):
            for kd, vd in descs:
                swab_kernel[(HKV, ns)](q2, kd, vd, cp, pos, m, l, o, S, S, ns, R=R, D=D, DV=D, BM=16, BS=bs,
                                       LAZY_L=lazy, num_warps=warps, num_stages=stages)
                combine(m, l, o, out, ns)
        try:
            record("swab", swab, out, splits=ns, bs=bs, stages=stages, warps=warps, lazy=lazy)
            rows[-1]["err_backend"] = float((out - base_out).abs().max())
            print(f"    against the backend kernel: {rows[-1]['err_backend']:.2e}")
        except Exception as e:  # noqa: BLE001 (a configuration that does not compile or fit)
            print(f"{S} swab {ns} {bs} {stages} {warps} {lazy}: {type(e).__name__}: {str(e)[:200]}", flush=True)
    for ns, bs, stages, warps in cfgs.get("loads", []):
        sums = torch.empty((HKV * ns, D), device="cuda")
        descs = [(TensorDescriptor.from_tensor(ck.view(S, HKV * D), [bs, D]),
                  TensorDescriptor.from_tensor(cv.view(S, HKV * D), [bs, D])) for ck, cv in caches]

        def loads(sums=sums, descs=descs, ns=ns, bs=bs, stages=stages, warps=warps):
            for kd, vd in descs:
                tma_loads_kernel[(HKV, ns)](kd, vd, sums, n + 1, ns, D=D, BS=bs, num_warps=warps, num_stages=stages)
        try:
            record("tma loads", loads, splits=ns, bs=bs, stages=stages, warps=warps)
        except Exception as e:  # noqa: BLE001
            print(f"{S} tma loads {ns} {bs} {stages} {warps}: {type(e).__name__}: {str(e)[:200]}", flush=True)
    del caches
    torch.cuda.empty_cache()


B = [(16, 128, 3, 4), (16, 64, 4, 4), (32, 64, 3, 4), (16, 128, 2, 4)]
CASES = {
    16512: dict(backend=[(16, 128, 3, 4, False, False)] + [(*b, True, False) for b in B]
                + [(16, 128, 3, 4, False, True), (16, 128, 3, 4, True, True), (16, 64, 4, 4, True, True)],
                swab=[(16, 128, 3, 4, False), (16, 128, 3, 4, True), (16, 64, 4, 4, True), (32, 64, 3, 4, True),
                      (16, 128, 3, 8, True), (64, 64, 3, 4, True)],
                loads=[(16, 128, 3, 4), (16, 64, 4, 4), (32, 64, 3, 4), (64, 64, 3, 4)]),
    4224: dict(backend=[(16, 64, 3, 4, False, False), (16, 64, 3, 4, True, False), (16, 128, 3, 4, True, False),
                        (8, 128, 3, 4, True, False), (16, 64, 3, 4, False, True), (16, 64, 3, 4, True, True),
                        (16, 128, 3, 4, True, True)],
               swab=[(16, 64, 3, 4, True), (8, 128, 3, 4, True)]),
    128: dict(backend=[(4, 32, 3, 4, False, False), (4, 32, 3, 4, True, False), (2, 64, 3, 4, True, False),
                       (4, 32, 3, 4, False, True), (4, 32, 3, 4, True, True), (2, 64, 3, 4, True, True),
                       (2, 64, 3, 4, False, True), (1, 128, 2, 4, True, True)],
              swab=[(2, 64, 3, 4, True), (4, 32, 3, 4, True)]),
}

QUICK = {
    16512: dict(backend=[(16, 128, 3, 4, False, False), (16, 128, 3, 4, True, False), (16, 64, 4, 4, True, False),
                         (16, 128, 3, 4, False, True), (16, 128, 3, 4, True, True)],
                swab=[(16, 128, 3, 4, True), (32, 64, 3, 4, True)], loads=[(16, 128, 3, 4), (32, 64, 3, 4)]),
    128: dict(backend=[(4, 32, 3, 4, False, True), (4, 32, 3, 4, True, True), (2, 64, 3, 4, True, True)], swab=[]),
}

TINY = {16512: dict(backend=[(16, 128, 3, 4, False, False), (16, 128, 3, 4, True, False), (16, 128, 3, 4, False, True),
                             (16, 128, 3, 4, True, True)], swab=[], loads=[(16, 128, 3, 4)])}


def offline() -> None:
    """Compile `swab_kernel` for sm_90 with no GPU (Qwen3-8B's shapes) with and without warp_specialize, and print
    whether the loop became producer / consumer partitions (a `ttg.warp_specialize` region in the TTGIR)."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    for bs, warps, stages in ((64, 4, 3), (128, 4, 3), (64, 8, 3), (128, 8, 2)):
        sig = dict(q="*fp32", kdesc=f"tensordesc<fp16[{bs},{D}]>", vdesc=f"tensordesc<fp16[{bs},{D}]>",
                   kv_pos="*i32", q_pos="*i32", m_out="*fp32", l_out="*fp32", o_out="*fp32", n_kv="i32", S="i32",
                   NSPLIT="i32", **dict.fromkeys(("R", "D", "DV", "BM", "BS", "LAZY_L", "WS"), "constexpr"))
        for ws in (False, True):
            cst = dict(R=R, D=D, DV=D, BM=16, BS=bs, LAZY_L=True, WS=ws)
            try:
                c = triton.compile(ASTSource(swab_kernel, sig, cst), target=GPUTarget("cuda", 90, 32),
                                   options=dict(num_warps=warps, num_stages=stages))
                what = (f"compiled, {c.metadata.shared} B shared, partitions "
                        f"{'ttg.warp_specialize' in c.asm['ttgir']}, setmaxnreg {c.asm['ptx'].count('setmaxnreg')}")
            except Exception as e:  # noqa: BLE001 (a pass failing is the answer)
                what = f"{type(e).__name__}: {str(e).splitlines()[0][:100]}"
            print(f"Triton {triton.__version__} sm_90 BS {bs} warps {warps} stages {stages} "
                  f"warp_specialize {ws}: {what}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    ap.add_argument("--cells", default="16512,4224,128")
    ap.add_argument("--quick", action="store_true", help="fewer rows (16,512 and 128 cells)")
    ap.add_argument("--tiny", action="store_true", help="five rows at 16,512 cells")
    ap.add_argument("--offline", action="store_true", help="only compile the swab loop for sm_90, with and without "
                    "warp specialization (no GPU needed)")
    a = ap.parse_args()
    if a.offline:
        return offline()
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    rows: list = []
    cases = TINY if a.tiny else QUICK if a.quick else CASES
    for S in (int(s) for s in a.cells.split(",")) if cases is CASES else cases:
        run_case(S, S - 128 if S > 256 else S - 1, cases[S], rows)
    if a.out:
        a.out.mkdir(parents=True, exist_ok=True)
        (a.out / "attn-swab.json").write_text(json.dumps(dict(device=torch.cuda.get_device_name(), rows=rows),
                                                         indent=1))


if __name__ == "__main__":
    main()
