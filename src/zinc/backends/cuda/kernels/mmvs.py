"""Decode matvec on 8-bit activations, rows as streams (Q4_K, Q6_K): the form `mmvq.matvec` takes for them.

A program computes R rows (R streams; with a GLU, R rows of the gate and the same R of the up
weight). Its threads split the row into units: a Q4_K unit is 16 bytes of nibbles (one half h of a
64-value group g: values 64g + 16h + [0, 16) in the low nibbles, 64g + 32 + 16h + [0, 16) in the high
ones), a Q6_K unit 48 bytes (two 16-byte runs of ql and one of qh: the four 16-value runs of one
(128-value half, 16-value column) pair). Each thread takes NP / (32 * warps) units per step: 16-byte
loads, coalesced across the warp. A unit's scales, mins and activation sums are the thread's own, and
its activation words are loaded once for all R streams, so the loop has only elementwise work: every
tensor in it is (NP,) or (NP, 4), and each stream's sum over the units is taken once, at the end. With one
unit a thread the loop's SASS has no shuffles and no barriers (`bench/cuda_mmvq_sweep.py --sass`); with two,
Q6_K's loop gets 32 shuffles (Triton lays its (NP,) and (NP, 4) tensors out differently there), Q4_K's none. The same kernel runs the selected experts of a MoE layer (EXPERTS).

Q6_K reads its 16 scales per 256 values as `sc4` (one int32 word per unit: the scales of its four
runs; `zinc.backends.cuda.weights`). The arithmetic is that of `mmvq` (integer dot products of the
8-bit activations, scaled per block), so the two forms agree to f32 rounding.
"""

from __future__ import annotations

import triton
import triton.language as tl

from zinc.backends.cuda.kernels.elementwise import glu_act
from zinc.backends.cuda.kernels.dot4 import M4, M30, dot4, in_range


@triton.jit
def _q4k_act(xq, xd, xs, p, w, ok):
    """Activation words (NP, 4) of the low and high nibbles of Q4_K units p, and their blocks' d and sums."""
    g = p // 2
    h = p % 2
    xo = (g * 16 + h * 4)[:, None] + w[None, :]
    m2 = ok[:, None]
    XL = tl.load(xq + xo, mask=m2, other=0)
    XH = tl.load(xq + xo + 8, mask=m2, other=0)
    xdl = tl.load(xd + g * 4, mask=ok, other=0.0)
    xdh = tl.load(xd + g * 4 + 2, mask=ok, other=0.0)
    xsl = tl.load(xs + g * 4 + h, mask=ok, other=0.0)
    xsh = tl.load(xs + g * 4 + 2 + h, mask=ok, other=0.0)
    return XL, XH, xdl, xdh, xsl, xsh


@triton.jit
def _wts(a, b, c, d, row, p, w, ok, K, QT: tl.constexpr):
    """The weight words of row `row` over units p, loaded apart from the math so a step issues every stream's
    weight loads before its activation loads and its math (`_program`). Q4_K (a, b, c = qs, sm4, dm): the
    nibble words (NP, 4), the unit's group's four scale and min bytes, the block's (d, dmin) f16 pair as one
    word. Q6_K (a, b, c, d = ql, qh, sc4, d): the two ql runs and the qh run (NP, 4) each, the four runs'
    scale bytes, the block's d."""
    nsb = K // 256
    m2 = ok[:, None]
    if QT == 12:
        W = tl.load(a + row * (nsb * 32) + p[:, None] * 4 + w[None, :], mask=m2, other=0)
        v = tl.load(b + row * (nsb * 4) + p // 2, mask=ok, other=0)
        dmw = tl.load(c.to(tl.pointer_type(tl.int32), bitcast=True) + row * nsb + p // 8, mask=ok, other=0)
        return W, W, W, v, dmw
    else:
        hh = p // 2
        e = p % 2
        oa = (hh * 16 + e * 4)[:, None] + w[None, :]
        Wa = tl.load(a + row * (nsb * 32) + oa, mask=m2, other=0)
        Wb = tl.load(a + row * (nsb * 32) + oa + 8, mask=m2, other=0)
        H = tl.load(b + row * (nsb * 16) + (hh * 8 + e * 4)[:, None] + w[None, :], mask=m2, other=0)
        v = tl.load(c + row * (nsb * 4) + p, mask=ok, other=0)
        dq = tl.load(d + row * nsb + p // 4, mask=ok, other=0.0).to(tl.float32)
        return Wa, Wb, H, v, dq


@triton.jit
def _q4k_dot(W, v, dmw, XL, XH, xdl, xdh, xsl, xsh, ASM: tl.constexpr):
    """A Q4_K row's partial dots (NP,) from its `_wts` words and the units' activations (`_q4k_act`); also with
    leading dimensions (rows of several warps: W (..., NP, 4), the activations broadcast to it)."""
    dl = tl.sum(dot4(W & M4, XL, False, ASM), axis=-1)
    dh = tl.sum(dot4((W >> 4) & M4, XH, False, ASM), axis=-1)
    d = (dmw & 0xFFFF).to(tl.int16).to(tl.float16, bitcast=True).to(tl.float32)
    dmin = (dmw >> 16).to(tl.int16).to(tl.float16, bitcast=True).to(tl.float32)
    il = (dl * (v & 255)).to(tl.float32)
    ih = (dh * ((v >> 8) & 255)).to(tl.float32)
    mnl = ((v >> 16) & 255).to(tl.float32)
    mnh = ((v >> 24) & 255).to(tl.float32)
    return d * (il * xdl + ih * xdh) - dmin * (mnl * xsl + mnh * xsh)


@triton.jit
def _q6k_act(xq, xd, xs, p, w, ok):
    """Activation words (NP, 4) of the four runs of Q6_K units p (unit 2 * half + column), and per run
    the 32-value block's d and the 16-value run's sum, each already times -32 for the sum."""
    hh = p // 2
    e = p % 2
    xo = (hh * 32 + e * 4)[:, None] + w[None, :]
    m2 = ok[:, None]
    X0 = tl.load(xq + xo, mask=m2, other=0)
    X1 = tl.load(xq + xo + 8, mask=m2, other=0)
    X2 = tl.load(xq + xo + 16, mask=m2, other=0)
    X3 = tl.load(xq + xo + 24, mask=m2, other=0)
    so = hh * 8 + e
    return (X0, X1, X2, X3, tl.load(xd + hh * 8, mask=ok, other=0.0), tl.load(xd + hh * 8 + 2, mask=ok, other=0.0),
            tl.load(xd + hh * 8 + 4, mask=ok, other=0.0), tl.load(xd + hh * 8 + 6, mask=ok, other=0.0),
            tl.load(xs + so, mask=ok, other=0.0) * 32.0, tl.load(xs + so + 2, mask=ok, other=0.0) * 32.0,
            tl.load(xs + so + 4, mask=ok, other=0.0) * 32.0, tl.load(xs + so + 6, mask=ok, other=0.0) * 32.0)


@triton.jit
def _sc(v, j: tl.constexpr):
    """Signed byte j of the words v, as f32."""
    return ((v << (24 - 8 * j)) >> 24).to(tl.float32)


@triton.jit
def _q6k_dot(Wa, Wb, H, v, d, X0, X1, X2, X3, x0, x1, x2, x3, y0, y1, y2, y3, ASM: tl.constexpr):
    """A Q6_K row's partial dots (NP,) from its `_wts` words and the units' activations (`_q6k_act`)."""
    d0 = tl.sum(dot4((Wa & M4) | ((H << 4) & M30), X0, False, ASM), axis=1).to(tl.float32)
    d1 = tl.sum(dot4((Wb & M4) | ((H << 2) & M30), X1, False, ASM), axis=1).to(tl.float32)
    d2 = tl.sum(dot4(((Wa >> 4) & M4) | (H & M30), X2, False, ASM), axis=1).to(tl.float32)
    d3 = tl.sum(dot4(((Wb >> 4) & M4) | ((H >> 2) & M30), X3, False, ASM), axis=1).to(tl.float32)
    return d * (_sc(v, 0) * (x0 * d0 - y0) + _sc(v, 1) * (x1 * d1 - y1) + _sc(v, 2) * (x2 * d2 - y2)
                + _sc(v, 3) * (x3 * d3 - y3))


@triton.jit
def gdc_wait_zero(x):
    """griddepcontrol.wait (programmatic dependent launch: until the grid before this one has finished and its
    writes are visible); returns 0, opaque to the compiler, for the addresses of the loads that must follow.
    (Inline PTX rather than triton.language.extra.cuda's, which older Tritons lack.)"""
    return tl.inline_asm_elementwise("griddepcontrol.wait;\nmov.u32 $0, 0;", "=r,r", [x], dtype=tl.int32,
                                     is_pure=False, pack=1)


@triton.jit
def gdc_trigger(x):
    """griddepcontrol.launch_dependents: the programmatic dependent launch after this one may start."""
    tl.inline_asm_elementwise("griddepcontrol.launch_dependents;\nmov.u32 $0, 0;", "=r,r", [x], dtype=tl.int32,
                              is_pure=False, pack=1)


@triton.jit
def _program(xq, xd, xs, out, a, b, c, d, a2, b2, c2, d2, ids, N, K, so, XDIV, ES, UO, pid, t, QT: tl.constexpr,
             R: tl.constexpr, NP: tl.constexpr, ASM: tl.constexpr, EVEN: tl.constexpr, ACT: tl.constexpr,
             U: tl.constexpr, EXPERTS: tl.constexpr, PDL: tl.constexpr = 0):
    """Program pid of column t: the R rows R * pid + [0, R) (`mmvs_kernel`). Each step loads its streams'
    weight words first, then the activations, then does the math (the weights-first order: replay of a
    Qwen3-8B decode step 2,038 -> 2,013 us on the H200). PDL (on a GPU; `pdl_options`): the launch may start
    before the one it follows has finished; the program waits for it (griddepcontrol.wait) after its first
    step's weight loads (1) or before any load (2), and the activations' addresses take the wait's result."""
    base = pid * R
    z = pid * 0  # 0; with PDL the wait's result, which the loads after the wait take in their addresses
    if PDL == 2 and ASM:  # launched early: wait before any load (the experts' ids too)
        z = gdc_wait_zero(pid)
    if EXPERTS == 2:  # columns in the order of `ids`' second half (the pairs sorted by expert), not the pairs'
        t = tl.load(ids + tl.num_programs(1) + t + z)
    if EXPERTS:
        roff = tl.load(ids + t + z).to(tl.int64) * ES
        xr = t // XDIV
    else:
        roff = 0
        xr = t
    xq, xd, xs = xq + xr * (K // 4), xd + xr * (K // 16), xs + xr * (K // 16)
    units = K // 32 if QT == 12 else K // 64
    pr = tl.arange(0, NP)
    w = tl.arange(0, 4)
    r0 = roff + tl.minimum(base, N - 1).to(tl.int64)
    r1 = roff + tl.minimum(base + 1, N - 1).to(tl.int64)
    r2 = roff + tl.minimum(base + 2, N - 1).to(tl.int64)
    r3 = roff + tl.minimum(base + 3, N - 1).to(tl.int64)
    if ACT >= 0:  # streams 2 and 3: the up weight's rows (a GLU), or rows 2 and 3 (R 4)
        a3, b3, c3, d3, q2, q3 = a2, b2, c2, d2, r0 + UO, r1 + UO
    else:
        a3, b3, c3, d3, q2, q3 = a, b, c, d, r2, r3
    acc0 = tl.zeros([NP], dtype=tl.float32)
    acc1 = tl.zeros([NP], dtype=tl.float32)
    acc2 = tl.zeros([NP], dtype=tl.float32)
    acc3 = tl.zeros([NP], dtype=tl.float32)
    for u0 in range(0, units, NP * U):
        for j in tl.static_range(U):
            p = u0 + j * NP + pr
            ok = in_range(p, units, EVEN)
            # all four streams' words (one the configuration does not use is never read: its loads are dropped)
            A0, B0, C0, D0, E0 = _wts(a, b, c, d, r0, p, w, ok, K, QT)
            A1, B1, C1, D1, E1 = _wts(a, b, c, d, r1, p, w, ok, K, QT)
            A2, B2, C2, D2, E2 = _wts(a3, b3, c3, d3, q2, p, w, ok, K, QT)
            A3, B3, C3, D3, E3 = _wts(a3, b3, c3, d3, q3, p, w, ok, K, QT)
            if PDL == 1 and ASM and j == 0:  # launched early: the first step's weights in flight, then wait
                if u0 == 0:
                    z = gdc_wait_zero(pid)
            p = p + z
            if QT == 12:
                XL, XH, xdl, xdh, xsl, xsh = _q4k_act(xq, xd, xs, p, w, ok)
                acc0 += _q4k_dot(A0, D0, E0, XL, XH, xdl, xdh, xsl, xsh, ASM)
                if R > 1:
                    acc1 += _q4k_dot(A1, D1, E1, XL, XH, xdl, xdh, xsl, xsh, ASM)
                if ACT >= 0 or R > 2:
                    acc2 += _q4k_dot(A2, D2, E2, XL, XH, xdl, xdh, xsl, xsh, ASM)
                    if R > 1:
                        acc3 += _q4k_dot(A3, D3, E3, XL, XH, xdl, xdh, xsl, xsh, ASM)
            else:
                X0, X1, X2, X3, x0, x1, x2, x3, y0, y1, y2, y3 = _q6k_act(xq, xd, xs, p, w, ok)
                acc0 += _q6k_dot(A0, B0, C0, D0, E0, X0, X1, X2, X3, x0, x1, x2, x3, y0, y1, y2, y3, ASM)
                if R > 1:
                    acc1 += _q6k_dot(A1, B1, C1, D1, E1, X0, X1, X2, X3, x0, x1, x2, x3, y0, y1, y2, y3, ASM)
                if ACT >= 0 or R > 2:
                    acc2 += _q6k_dot(A2, B2, C2, D2, E2, X0, X1, X2, X3, x0, x1, x2, x3, y0, y1, y2, y3, ASM)
                    if R > 1:
                        acc3 += _q6k_dot(A3, B3, C3, D3, E3, X0, X1, X2, X3, x0, x1, x2, x3, y0, y1, y2, y3, ASM)
    y0 = tl.sum(acc0, axis=0)
    y1 = tl.sum(acc1, axis=0)
    y2 = tl.sum(acc2, axis=0)
    y3 = tl.sum(acc3, axis=0)
    o = out + t * so + base
    if ACT >= 0:
        tl.store(o, glu_act(y0, y2, ACT))
        if R > 1:
            tl.store(o + 1, glu_act(y1, y3, ACT), mask=base + 1 < N)
    else:
        tl.store(o, y0)
        if R > 1:
            tl.store(o + 1, y1, mask=base + 1 < N)
        if R > 2:
            tl.store(o + 2, y2, mask=base + 2 < N)
            tl.store(o + 3, y3, mask=base + 3 < N)


@triton.jit
def mmvs_kernel(xq, xd, xs, out, a, b, c, d, a2, b2, c2, d2, ids, N, K, so, XDIV, ES, UO, P1, N2, out2, so2,
                QT: tl.constexpr, R: tl.constexpr, NP: tl.constexpr, ASM: tl.constexpr, EVEN: tl.constexpr,
                ACT: tl.constexpr, U: tl.constexpr, EXPERTS: tl.constexpr, QT2: tl.constexpr = 0,
                R2: tl.constexpr = 1, NP2: tl.constexpr = 32, EVEN2: tl.constexpr = False, U2: tl.constexpr = 1,
                PDL: tl.constexpr = 0, TRIG: tl.constexpr = 0):
    """grid (cdiv(N, R), T): out[t, R*i + [0, R)] = W[rows] . x[t], R in (1, 2, 4); ACT >= 0 (R in (1, 2)):
    act(W . x) * (W2 . x), W2 (a2..d2) the up weight, its rows UO past the gate's. NP units per step, the loop
    unrolled U times. EXPERTS: program column t is a (token, slot) pair of a MoE selection: expert ids[t],
    whose rows start at ids[t] * ES of the stack, times x row t // XDIV (`mmvq.matvec_experts`); EXPERTS 2: column
    t is pair ids[T + t] (`moe.expert_order`: the pairs of one expert launched together, its rows read once).
    QT2 > 0: a second weight of the same input (a2..d2, type QT2, N2 rows) in the same launch: programs
    from P1 on compute its rows into out2 (row stride so2) with their own R2, NP2, EVEN2, U2 (`launch_pair`)."""
    pid = tl.program_id(0)
    t = tl.program_id(1)
    if TRIG == 1:
        gdc_trigger(pid)
    if QT2 == 0:
        _program(xq, xd, xs, out, a, b, c, d, a2, b2, c2, d2, ids, N, K, so, XDIV, ES, UO, pid, t, QT, R, NP, ASM,
                 EVEN, ACT, U, EXPERTS, PDL)
    elif pid < P1:
        _program(xq, xd, xs, out, a, b, c, d, a, b, c, d, ids, N, K, so, 1, 0, 0, pid, t, QT, R, NP, ASM, EVEN, -1,
                 U, False, PDL)
    else:
        _program(xq, xd, xs, out2, a2, b2, c2, d2, a2, b2, c2, d2, ids, N2, K, so2, 1, 0, 0, pid - P1, t, QT2, R2,
                 NP2, ASM, EVEN2, -1, U2, False, PDL)
    if TRIG == 2:
        gdc_trigger(pid)


def launch(xqt, wa: tuple, wb: tuple | None, qtype: int, n: int, k: int, out, cfg: tuple, act: int,
           experts: tuple | None = None, pdl: tuple = (0, 0)) -> None:
    """out (T, n) = the rows of weight arrays wa (a, b, c, d; with wb and act >= 0 a GLU) times the 8-bit
    activations xqt; cfg = (R, units per thread, warps, U). experts = (ids (T, NSEL) int32, XDIV, expert
    rows ES, up rows offset UO[, `moe.expert_order(ids)` or None]): out (T, NSEL, n), pair p = (t, j) of expert
    ids[t, j] times x row p // XDIV (with the order: the pairs launched expert by expert)."""
    xq, xd, xs = xqt
    r, upt, nw, u = cfg
    assert r in ((1, 2) if wb else (1, 2, 4)), cfg
    npu = 32 * nw * upt
    units = k_units(qtype, k)
    ids, xdiv, es, uo, *order = experts if experts else (out, 1, 0, 0)
    assert not (experts and pdl[0] == 1), "the experts' ids are read first: an early launch must wait before that"
    cols = ids.numel() if experts else xq.shape[0]
    ordered = bool(order) and order[0] is not None
    if ordered:  # (ids then the columns' order, one array: `moe.expert_order`)
        ids = order[0]
    mmvs_kernel[(triton.cdiv(n, r), cols)](
        xq, xd, xs, out, *wa, *(wb or wa), ids, n, k, n if experts else out.stride(0), xdiv, es, uo, 0, 0, out, 0,
        QT=qtype, R=r, NP=npu, ASM=xq.is_cuda, EVEN=units % (npu * u) == 0, ACT=act if wb else -1, U=u,
        EXPERTS=(2 if ordered else 1) if experts else 0, num_warps=nw, num_stages=1, **pdl_options(pdl, xq))


def pdl_options(pdl: tuple, x) -> dict:
    """The launch options of a programmatic dependent launch (also `mmvq.quantize_kernel`'s) for pdl = (wait,
    trigger) on a GPU: wait 0: a plain launch, else an early one whose programs wait for the launch before it
    after their first weight loads (1; a quantize kernel: first) or before any load (2); trigger 1 / 2: the next
    launch may start at the programs' start / end, 0: when they exit. A launch that reads anything but weights
    before its wait (the experts' ids) must wait before any load."""
    wait, trig = pdl if x.is_cuda else (0, 0)
    return dict(PDL=wait, TRIG=trig, launch_pdl=wait > 0) if wait or trig else {}


def launch_pair(xqt, first: tuple, second: tuple, pdl: tuple = (0, 0)) -> None:
    """Two weights of one input in one launch: first, second = (weight arrays, qtype, n, out (T, n), cfg), each
    cfg (R, units per thread, warps, U) of `launch` (no GLU); the warps must agree."""
    xq, xd, xs = xqt
    (wa, qa, na, oa, ca), (wb, qb, nb, ob, cb) = first, second
    assert ca[2] == cb[2] and ca[0] in (1, 2, 4) and cb[0] in (1, 2, 4), (ca, cb)
    npa, npb = 32 * ca[2] * ca[1], 32 * cb[2] * cb[1]
    ua, ub = k_units(qa, xq.shape[1] * 4), k_units(qb, xq.shape[1] * 4)
    p1 = triton.cdiv(na, ca[0])
    mmvs_kernel[(p1 + triton.cdiv(nb, cb[0]), xq.shape[0])](
        xq, xd, xs, oa, *wa, *wb, xq, na, xq.shape[1] * 4, oa.stride(0), 1, 0, 0, p1, nb, ob, ob.stride(0),
        QT=qa, R=ca[0], NP=npa, ASM=xq.is_cuda, EVEN=ua % (npa * ca[3]) == 0, ACT=-1, U=ca[3], EXPERTS=False,
        QT2=qb, R2=cb[0], NP2=npb, EVEN2=ub % (npb * cb[3]) == 0, U2=cb[3], num_warps=ca[2], num_stages=1,
        **pdl_options(pdl, xq))


def k_units(qtype: int, k: int) -> int:
    """Units of a row of k values: Q4_K 32 values each, Q6_K 64."""
    return k // 32 if qtype == 12 else k // 64
