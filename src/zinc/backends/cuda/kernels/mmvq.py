"""Decode matvec on 8-bit activations with 4-way integer dot products (Q4_K, Q6_K, Q8_0, MXFP4).

The activations x (T, K) are first quantized in blocks of 32 (`quantize_x`): int8 values packed
four to an int32 word (T, K/4), the block scale d = max|x| / 127 (T, K/32) and, per 16 values, the
scaled sum d * sum(q) (T, K/16). A weight's packed 4/6/8-bit values then meet the activation
bytes four at a time in one `dp4a` (integer dot of four byte pairs plus an accumulator); the
block's integer sum is scaled once. This is how llama.cpp runs K-quant dot products too (its CPU
path quantizes the activations to 8 bits as well), so the result follows llama.cpp's arithmetic,
not an exact f32 dot: the relative error against f32 is ~1e-3.

On the GPU `dp4a` is one PTX instruction (inline assembly); on CPU tensors (Triton's interpreter,
in CI) `dot4.dot4` computes the same integer sum with shifts and multiplies.

Weight layouts are the per-field arrays of `zinc.backends.cuda.weights`, read as int32 words:
Q4_K qs (N, K/8) words whose low nibbles are values 64g + i and high nibbles 64g + 32 + i of a
64-value group g; Q6_K ql (N, K/8) and qh (N, K/16) words; Q8_0 qs (N, K/4) words; MXFP4 qs
(N, K/8) words whose low nibbles are values 32b + i and high nibbles 32b + 16 + i of block b (an
E2M1 code: doubled it is an integer in [-12, 12], turned into bytes by `_e2m1_dot`).

For a few tokens `matvec` of Q4_K and Q6_K takes the rows-as-streams form of `kernels.mmvs` (V = 2 in a
configuration); Q8_0 and MXFP4 take `mmvq_kernel`.

`matvec_experts` is the same product over the experts a MoE router selected: for an expert stack
(E, N, K) (uploaded as E*N rows) out[t, j] = W[ids[t, j]] . x[t] (or x[t, j]), the ids read on the
device (no host sync: a CUDA graph can hold the launch); with `glu` one kernel does gate and up. Its
configurations (EXPERT_CONFIG) pick `mmvq_experts_kernel` or, for Q4_K / Q6_K, the streams form.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from zinc.backends.cuda.kernels import mmvs
from zinc.backends.cuda.kernels.elementwise import glu_act
from zinc.backends.cuda.kernels.dot4 import M4, M30, dot4, in_range
from zinc.backends.cuda.kernels.quant import INTERPRETER_ROWS, e8m0_half


@triton.jit
def quantize_kernel(x, w, res, sum_out, out, xq, xd, xs, K, eps, NB: tl.constexpr, NORM: tl.constexpr,
                    HAS_W: tl.constexpr, HAS_RES: tl.constexpr, KP: tl.constexpr, PDL: tl.constexpr = 0,
                    TRIG: tl.constexpr = 0):
    """x (T, K) f32 -> xq (T, K/4) i32, xd (T, K/32, 2) f32 [d, d * sum of the block's q],
    xs (T, K/16) f32 (d * sum of q per 16 values); grid (cdiv(K/32, NB), T).

    With NORM the row is first RMS-normed like `elementwise.rms_norm_kernel` (x + res stored to
    sum_out with HAS_RES, times w with HAS_W), stored to out, and that is what gets quantized: each
    program reads the whole row (KP >= K values, from L2 after the first) for the sum of squares
    and normalizes its own NB blocks, so a one-token row is spread over several programs."""
    t = tl.program_id(1)
    if TRIG == 1:  # a programmatic dependent launch (`mmvs.pdl_options`)
        mmvs.gdc_trigger(t)
    if PDL:
        mmvs.gdc_wait_zero(t)
    b = tl.program_id(0) * NB + tl.arange(0, NB)
    ok = b < K // 32
    h = tl.arange(0, 2)
    w4 = tl.arange(0, 4)
    j = tl.arange(0, 4)
    off = b[:, None, None, None] * 32 + h[None, :, None, None] * 16 + w4[None, None, :, None] * 4 + j[None, None, None, :]
    m4 = ok[:, None, None, None]
    row = t.to(tl.int64) * K
    v = tl.load(x + row + off, mask=m4, other=0.0)
    if NORM:  # every load before the sum of squares: one memory round trip before the math
        if HAS_W:
            wv = tl.load(w + off, mask=m4, other=0.0)
        kk = tl.arange(0, KP)
        full = tl.load(x + row + kk, mask=kk < K, other=0.0)
        if HAS_RES:
            full = full + tl.load(res + row + kk, mask=kk < K, other=0.0)
            v = v + tl.load(res + row + off, mask=m4, other=0.0)
            tl.store(sum_out + row + off, v, mask=m4)
        ms = tl.sum(full * full, axis=0) / K
        v = v * (1.0 / tl.sqrt(ms + eps))
        if HAS_W:
            v = v * wv
        tl.store(out + row + off, v, mask=m4)
    q8_store(v, b, t, K, ok, xq, xd, xs)
    if TRIG == 2:
        mmvs.gdc_trigger(t)


@triton.jit
def q8_store(v, b, t, K, ok, xq, xd, xs):
    """Quantize v (NB, 2, 4, 4): the 32 values of blocks b (NB,) of row t (of K values) where ok,
    into xq, xd, xs as `quantize_kernel` says (also called by the attention and recurrent kernels)."""
    j = tl.arange(0, 4)
    h = tl.arange(0, 2)
    w4 = tl.arange(0, 4)
    amax = tl.max(tl.max(tl.max(tl.abs(v), axis=3), axis=2), axis=1)  # (NB,)
    d = tl.math.div_rn(amax, 127.0)
    dd = tl.where(amax > 0, d, 1.0)
    s = tl.math.div_rn(v, dd[:, None, None, None])
    q = (tl.floor(tl.abs(s) + 0.5) * tl.where(s < 0, -1.0, 1.0)).to(tl.int32)  # round half away from 0
    word = tl.sum((q & 255) << (j * 8)[None, None, None, :], axis=3)  # (NB, 2, 4)
    wo = b[:, None, None] * 8 + h[None, :, None] * 4 + w4[None, None, :]
    tl.store(xq + t * (K // 4) + wo, word, mask=ok[:, None, None])
    qsum = tl.sum(tl.sum(q, axis=3), axis=2)  # (NB, 2)
    tl.store(xs + t * (K // 16) + b[:, None] * 2 + h[None, :], qsum.to(tl.float32) * d[:, None], mask=ok[:, None])
    xo = t * (K // 16) + b * 2
    tl.store(xd + xo, d, mask=ok)
    tl.store(xd + xo + 1, tl.sum(qsum, axis=1).to(tl.float32) * d, mask=ok)


def q8_buffers(t: int, k: int, device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return (torch.empty((t, k // 4), dtype=torch.int32, device=device),
            torch.empty((t, k // 32, 2), dtype=torch.float32, device=device),
            torch.empty((t, k // 16), dtype=torch.float32, device=device))


def quantize_x(x: torch.Tensor, nb: int = 0, pdl: tuple = (0, 0)) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """x (T, K) f32 contiguous, K a multiple of 32 -> (xq, xd, xs) as `quantize_kernel` says. pdl: as a
    programmatic dependent launch (`mmvs.pdl_options`; the programs wait before any load). nb: blocks a program
    (QX_BLOCKS where 0)."""
    t, k = x.shape
    nb = nb or QX_BLOCKS
    xqt = q8_buffers(t, k, x.device)
    quantize_kernel[(triton.cdiv(k // 32, nb), t)](x, x, x, x, x, *xqt, k, 0.0, NB=nb, NORM=False, HAS_W=False,
                                                   HAS_RES=False, KP=1, num_warps=1, **mmvs.pdl_options(pdl, x))
    return xqt


# blocks of 32 values each program of `norm_quantize` normalizes and quantizes, and its warps (rows of 1024 or
# more; fewer: 16 blocks (at most the row), one warp). H200, one 4096-wide row in a graph
# (bench/cuda_quant_sweep.py): 2 blocks, 2 warps 2.31 us; 16 blocks, 4 warps 2.55; quantize_x 12288 wide:
# 2 blocks, 1 warp 1.55 us, 8 blocks, 2 warps 1.73. An empty kernel costs 0.54 us there. In the decode step as
# programmatic dependent launches (H100, Qwen3-8B, replay of the step): 2 blocks, 2 warps 2,312.7 us; 1 block,
# 1 / 2 / 4 warps 2,329.7 / 2,305.8 / 2,292.4 (bench/RESULTS.md, session 25).
NORM_BLOCKS, NORM_WARPS = 1, 4
QX_BLOCKS = 2  # blocks of 32 values a `quantize_x` program quantizes (one warp)


def norm_quantize(x: torch.Tensor, w, eps: float, out: torch.Tensor, res=None, sum_out=None,
                  cfg: tuple[int, int] | None = None, pdl: tuple = (0, 0)):
    """rms_norm of x (T, K) (+ res, stored to sum_out) (* w) into out, and out quantized (xq, xd, xs).
    cfg: (blocks per program, warps) instead of the default; pdl as `quantize_x`."""
    t, k = x.shape
    xqt = q8_buffers(t, k, x.device)
    nb, nw = cfg or ((NORM_BLOCKS, NORM_WARPS) if k >= 1024 else (16, 1))
    nb = min(nb, triton.next_power_of_2(k // 32))
    quantize_kernel[(triton.cdiv(k // 32, nb), t)](
        x, w if w is not None else x, res if res is not None else x, sum_out if sum_out is not None else x, out,
        *xqt, k, eps, NB=nb, NORM=True, HAS_W=w is not None, HAS_RES=res is not None,
        KP=triton.next_power_of_2(k), num_warps=nw, **mmvs.pdl_options(pdl, x))
    return xqt


@triton.jit
def _part_q4k(qw, sm4, dm, xq, xd, r, c, K, ASM: tl.constexpr, NG: tl.constexpr, EVEN: tl.constexpr):
    """Rows r (BN,) int64 over the 64-value groups [c, c + NG) -> (BN, NG) partial dots."""
    g = c + tl.arange(0, NG)
    w = tl.arange(0, 8)
    ok = in_range(g, K // 64, EVEN)
    W = tl.load(qw + r[:, None, None] * (K // 8) + g[None, :, None] * 8 + w[None, None, :],
                mask=ok[None, :, None], other=0)
    xo = g[:, None] * 16 + w[None, :]
    XL = tl.load(xq + xo, mask=ok[:, None], other=0)
    XH = tl.load(xq + xo + 8, mask=ok[:, None], other=0)
    dl = tl.sum(dot4(W & M4, XL[None, :, :], False, ASM), axis=2).to(tl.float32)
    dh = tl.sum(dot4((W >> 4) & M4, XH[None, :, :], False, ASM), axis=2).to(tl.float32)
    v = tl.load(sm4 + r[:, None] * (K // 64) + g[None, :], mask=ok[None, :], other=0)
    dmo = r[:, None] * (K // 128) + (g[None, :] // 4) * 2
    d = tl.load(dm + dmo, mask=ok[None, :], other=0.0).to(tl.float32)
    dmin = tl.load(dm + dmo + 1, mask=ok[None, :], other=0.0).to(tl.float32)
    i2 = tl.arange(0, 2)
    xds = tl.load(xd + g[:, None, None] * 4 + i2[None, :, None] * 2 + i2[None, None, :], mask=ok[:, None, None],
                  other=0.0)  # (NG, lo/hi, d/sum)
    xdv, xsv = tl.split(xds)
    xdl, xdh = tl.split(xdv)
    xsl, xsh = tl.split(xsv)
    xdl, xdh, xsl, xsh = xdl[None, :], xdh[None, :], xsl[None, :], xsh[None, :]
    scl = (v & 255).to(tl.float32)
    sch = ((v >> 8) & 255).to(tl.float32)
    mnl = ((v >> 16) & 255).to(tl.float32)
    mnh = ((v >> 24) & 255).to(tl.float32)
    return d * (scl * xdl * dl + sch * xdh * dh) - dmin * (mnl * xsl + mnh * xsh)


@triton.jit
def _part_q6k(ql, qh, sc, dd, xq, xd, xs, r, c, K, ASM: tl.constexpr, NG: tl.constexpr, EVEN: tl.constexpr):
    """Q6_K over 16-word units m in [c, c + NG): m = 2*(128-value half) + which 16-value run."""
    m = c + tl.arange(0, NG)
    w = tl.arange(0, 4)
    ok = in_range(m, K // 64, EVEN)
    h = m // 2
    cc = (m % 2) * 4
    rr = r[:, None, None]
    m3 = ok[None, :, None]
    wa_o = (h * 16 + cc)[None, :, None] + w[None, None, :]
    Wa = tl.load(ql + rr * (K // 8) + wa_o, mask=m3, other=0)
    Wb = tl.load(ql + rr * (K // 8) + wa_o + 8, mask=m3, other=0)
    H = tl.load(qh + rr * (K // 16) + (h * 8 + cc)[None, :, None] + w[None, None, :], mask=m3, other=0)
    v0 = (Wa & M4) | ((H << 4) & M30)
    v1 = (Wb & M4) | ((H << 2) & M30)
    v2 = ((Wa >> 4) & M4) | (H & M30)
    v3 = ((Wb >> 4) & M4) | ((H >> 2) & M30)
    xo = (h * 32 + cc)[:, None] + w[None, :]
    mk = ok[:, None]
    d0 = tl.sum(dot4(v0, tl.load(xq + xo, mask=mk, other=0)[None, :, :], False, ASM), axis=2).to(tl.float32)
    d1 = tl.sum(dot4(v1, tl.load(xq + xo + 8, mask=mk, other=0)[None, :, :], False, ASM), axis=2).to(tl.float32)
    d2 = tl.sum(dot4(v2, tl.load(xq + xo + 16, mask=mk, other=0)[None, :, :], False, ASM), axis=2).to(tl.float32)
    d3 = tl.sum(dot4(v3, tl.load(xq + xo + 24, mask=mk, other=0)[None, :, :], False, ASM), axis=2).to(tl.float32)
    si = h * 8 + m % 2  # scale (and 16-value sum) index of run j: si + 2j
    so = r[:, None] * (K // 16) + si[None, :]
    mo = ok[None, :]
    s0 = tl.load(sc + so, mask=mo, other=0).to(tl.float32)
    s1 = tl.load(sc + so + 2, mask=mo, other=0).to(tl.float32)
    s2 = tl.load(sc + so + 4, mask=mo, other=0).to(tl.float32)
    s3 = tl.load(sc + so + 6, mask=mo, other=0).to(tl.float32)
    xd0 = h * 8  # xd holds (d, sum) pairs: d of 32-value block 4h + j at 2 * (4h + j)
    e0 = tl.load(xd + xd0, mask=ok, other=0.0)[None, :] * d0 - 32.0 * tl.load(xs + si, mask=ok, other=0.0)[None, :]
    e1 = tl.load(xd + xd0 + 2, mask=ok, other=0.0)[None, :] * d1 - 32.0 * tl.load(xs + si + 2, mask=ok, other=0.0)[None, :]
    e2 = tl.load(xd + xd0 + 4, mask=ok, other=0.0)[None, :] * d2 - 32.0 * tl.load(xs + si + 4, mask=ok, other=0.0)[None, :]
    e3 = tl.load(xd + xd0 + 6, mask=ok, other=0.0)[None, :] * d3 - 32.0 * tl.load(xs + si + 6, mask=ok, other=0.0)[None, :]
    d = tl.load(dd + r[:, None] * (K // 256) + (h // 2)[None, :], mask=mo, other=0.0).to(tl.float32)
    return d * (s0 * e0 + s1 * e1 + s2 * e2 + s3 * e3)


@triton.jit
def _part_q80(qw, dd, xq, xd, r, c, K, ASM: tl.constexpr, NG: tl.constexpr, EVEN: tl.constexpr):
    """Q8_0 blocks [c, c + NG) of 32 values -> (BN, NG)."""
    g = c + tl.arange(0, NG)
    w = tl.arange(0, 8)
    ok = in_range(g, K // 32, EVEN)
    W = tl.load(qw + r[:, None, None] * (K // 4) + g[None, :, None] * 8 + w[None, None, :],
                mask=ok[None, :, None], other=0)
    X = tl.load(xq + g[:, None] * 8 + w[None, :], mask=ok[:, None], other=0)
    dot = tl.sum(dot4(W, X[None, :, :], True, ASM), axis=2).to(tl.float32)
    d = tl.load(dd + r[:, None] * (K // 32) + g[None, :], mask=ok[None, :], other=0.0).to(tl.float32)
    return d * tl.load(xd + g * 2, mask=ok, other=0.0)[None, :] * dot


@triton.jit
def _e2m1_dot(v, x, ASM: tl.constexpr):
    """v: four E2M1 codes (one per byte, 0..15); their doubled values (0 1 2 3 4 6 8 12, bit 3 the
    sign) dotted with the four signed bytes of x."""
    m = v & 0x07070707
    hi = (m >> 2) & 0x01010101  # m >= 4: 4 5 6 7 -> 4 6 8 12 is m + (m & 3) (+ 2 more for 7)
    r = m + (m & 0x03030303 & (hi * 3)) + ((m & (m >> 1) & hi) << 1)
    neg = ((v >> 3) & 0x01010101) * 15
    return dot4(r, x, False, ASM) - 2 * dot4(r & neg, x, False, ASM)


@triton.jit
def _part_mxfp4(qw, e8, xq, xd, r, c, K, ASM: tl.constexpr, NG: tl.constexpr, EVEN: tl.constexpr):
    """MXFP4 blocks [c, c + NG) of 32 values -> (BN, NG): the integer dot times 2^(e - 128) (the
    E8M0 scale halved, as the values are doubled) times the activation block's d."""
    g = c + tl.arange(0, NG)
    w = tl.arange(0, 4)
    ok = in_range(g, K // 32, EVEN)
    W = tl.load(qw + r[:, None, None] * (K // 8) + g[None, :, None] * 4 + w[None, None, :],
                mask=ok[None, :, None], other=0)
    xo = g[:, None] * 8 + w[None, :]
    XL = tl.load(xq + xo, mask=ok[:, None], other=0)
    XH = tl.load(xq + xo + 4, mask=ok[:, None], other=0)
    dot = tl.sum(_e2m1_dot(W & M4, XL[None, :, :], ASM) + _e2m1_dot((W >> 4) & M4, XH[None, :, :], ASM), axis=2)
    scale = e8m0_half(tl.load(e8 + r[:, None] * (K // 32) + g[None, :], mask=ok[None, :], other=0).to(tl.int32))
    return scale * tl.load(xd + g * 2, mask=ok, other=0.0)[None, :] * dot.to(tl.float32)


@triton.jit
def _part(a, b, c, d, xqt, xdt, xst, r, u, K, QT: tl.constexpr, ASM: tl.constexpr, NG: tl.constexpr,
          EVEN: tl.constexpr):
    if QT == 12:
        return _part_q4k(a, b, c, xqt, xdt, r, u, K, ASM, NG, EVEN)
    elif QT == 14:
        return _part_q6k(a, b, c, d, xqt, xdt, xst, r, u, K, ASM, NG, EVEN)
    elif QT == 39:
        return _part_mxfp4(a, b, xqt, xdt, r, u, K, ASM, NG, EVEN)
    else:
        return _part_q80(a, b, xqt, xdt, r, u, K, ASM, NG, EVEN)


@triton.jit
def mmvq_kernel(xq, xd, xs, out, a, b, c, d, a2, b2, c2, d2, N, K, so, QT: tl.constexpr, BN: tl.constexpr,
                NG: tl.constexpr, KS: tl.constexpr, ASM: tl.constexpr, EVEN: tl.constexpr, ACT: tl.constexpr):
    """grid (cdiv(N, BN), T * KS): out[t, rows] (+)= W[rows] . x[t]; with KS > 1 the KS programs of a
    row block take every KS-th step of K and add atomically into a zeroed out. ACT >= 0 (KS 1):
    out = act(W . x) * (W2 . x), W2 (a2..d2) a second weight of the same type and shape (a GLU)."""
    t = tl.program_id(1) // KS
    ks = tl.program_id(1) % KS
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    r = tl.where(rn < N, rn, 0).to(tl.int64)
    xqt, xdt, xst = xq + t * (K // 4), xd + t * (K // 16), xs + t * (K // 16)
    if QT == 8 or QT == 39:
        units = K // 32
    else:
        units = K // 64
    acc = tl.zeros([BN, NG], dtype=tl.float32)
    acc2 = tl.zeros([BN, NG], dtype=tl.float32)
    for u in range(ks * NG, units, NG * KS):
        acc += _part(a, b, c, d, xqt, xdt, xst, r, u, K, QT, ASM, NG, EVEN)
        if ACT >= 0:
            acc2 += _part(a2, b2, c2, d2, xqt, xdt, xst, r, u, K, QT, ASM, NG, EVEN)
    y = tl.sum(acc, axis=1)
    y2 = tl.sum(acc2, axis=1)
    if ACT >= 0:
        y = glu_act(y, y2, ACT)
    if KS == 1:
        tl.store(out + t * so + rn, y, mask=rn < N)
    else:
        tl.atomic_add(out + t * so + rn, y, mask=rn < N)


TYPES = (8, 12, 14, 39)  # Q8_0, Q4_K, Q6_K, MXFP4
# ggml type -> (BN, NG, num_warps, KS[, num_stages]) of `mmvq_kernel` (Q4_K and Q6_K: the first form, V 0)
CONFIG = {12: (1, 16, 1, 1), 14: (1, 16, 1, 1), 8: (1, 32, 2, 1), 39: (1, 32, 1, 1)}
# (ggml type, N, K, glu) -> configuration, measured on the H200 (bench/cuda_mmvq_sweep.py); other shapes: `config`
SHAPE_CONFIG: dict[tuple[int, int, int, bool], tuple] = {}
# Q4_K and Q6_K take the rows-as-streams form (V 2, kernels/mmvs.py). H200 sweep of every Qwen3-8B decode shape
# (bench/results/2026-12-01-cuda-mmvq-sweep-v8-streams.json; us against the per-thread form V 1 before it):
# two rows a program, one warp, the GLU (2 x 12288x4096 16.5, was 17.6), 6144 and 5120 rows (6.0, 5.5; were 6.6,
# 5.9); a row in one loop trip (2 units a thread, unrolled twice) where the grid fits one wave of one-warp
# programs (4096x4096 4.8, was 5.5; 1024x4096 2.4, was 2.9) and for long rows (4096x12288 9.6, was 12.1); four
# rows a program for many rows (12288x4096 9.1, was 11.5). Q6_K: 151936x4096 119.9 (was 176.5), 4096x12288 13.4
# (was 18.0), 1024x4096 2.7 (was 3.2).
STREAMS_2, STREAMS_4, STREAMS_ROW = (2, 1, 1, 1, 1, 2, 1), (4, 1, 1, 1, 1, 2, 1), (2, 2, 1, 1, 1, 2, 2)
# the Q4_K GLU as two-warp programs of two rows, unrolled twice (a 4096-value row in one loop trip): in the captured
# step they beat the one-warp ones the standalone sweep chose (H100, Qwen3-8B, replay 2,236 -> 2,193 us;
# bench/RESULTS.md, session 35)
STREAMS_GLU = (2, 1, 2, 1, 1, 2, 2)
# Q6_K long rows (the down projection) the same way: H100, replay 2,194 -> 2,184 us against one-warp programs (session 35)
STREAMS_LONG6 = (2, 1, 2, 1, 1, 2, 2)
ONE_WAVE_ROWS = 4224  # 2 rows x 16 one-warp programs (their registers) x 132 multiprocessors


def interpreted(cfg: tuple, n: int, x: torch.Tensor) -> tuple:
    """A configuration as it runs on x's device: on the GPU as tuned; under Triton's CPU interpreter, where a
    program costs about its op count whatever its tile, the (BN, ...) forms' rows widened to up to
    INTERPRETER_ROWS (far fewer programs: the tiny GPT-OSS end-to-end test 2,265 s -> 105 s). The streams form
    (V 2) is kept."""
    if x.is_cuda or (len(cfg) > 5 and cfg[5] == 2):
        return cfg
    return (max(cfg[0], min(INTERPRETER_ROWS, triton.next_power_of_2(n))), *cfg[1:])


def config(qtype: int, n: int, k: int, glu: bool) -> tuple:
    """The configuration of `matvec` for a weight shape: (BN, NG, num_warps, KS[, num_stages[, V[, U]]])
    of `mmvq_kernel`, or for V 2 (R, units per thread, num_warps, 1, 1, 2, U) of `mmvs.mmvs_kernel`."""
    hit = SHAPE_CONFIG.get((qtype, n, k, glu))
    if hit is not None:
        return hit
    if qtype == 12:
        if glu:
            return STREAMS_GLU
        if k < 8192 and ONE_WAVE_ROWS < n < 8192:
            return STREAMS_2
        return STREAMS_ROW if k >= 8192 or n <= ONE_WAVE_ROWS else STREAMS_4
    if qtype == 14:
        if glu:
            return STREAMS_2
        return STREAMS_4 if n >= 65536 else STREAMS_LONG6 if k >= 8192 else (2, 2, 1, 1, 1, 2, 1)
    return CONFIG[qtype]


def words(parts, qtype: int, streams: bool = False) -> tuple[torch.Tensor, ...]:
    """The weight arrays `mmvq_kernel` (or with streams `mmvs.mmvs_kernel`) reads (packed bytes viewed as
    int32 words). The two differ in Q6_K's scales: the streams form reads sc4."""
    if qtype == 12:  # qs, sc, mn, dm, sm4
        return parts[0].view(torch.int32), parts[4], parts[3], parts[3]
    if qtype == 14:  # ql, qh, sc, d, sc4
        return parts[0].view(torch.int32), parts[1].view(torch.int32), parts[4 if streams else 2], parts[3]
    return parts[0].view(torch.int32), parts[1], parts[1], parts[1]  # Q8_0 qs, d; MXFP4 qs, e


def _streams(xqt, parts, qtype: int, n: int, k: int, out: torch.Tensor, cfg: tuple, glu: tuple | None,
             experts: tuple | None = None, bias: tuple | None = None, pdl: tuple = (0, 0)) -> bool:
    """Run the rows-as-streams form (kernels/mmvs.py) if cfg is one of its configurations (R, units per
    thread, num_warps, 1, 1, 2[, U]), the same tuple for `matvec` and `matvec_experts`; False if it is not."""
    if len(cfg) < 6 or cfg[5] != 2:
        return False
    assert qtype in (12, 14) and not bias, "the rows-as-streams form takes Q4_K and Q6_K, without biases"
    mmvs.launch(xqt, words(parts, qtype, True), words(glu[0], qtype, True) if glu else None, qtype, n, k, out,
                (cfg[0], cfg[1], cfg[2], cfg[6] if len(cfg) > 6 else 1), glu[1] if glu else -1, experts, pdl)
    return True


# (units a thread, unroll) of both halves of `matvec_pair`: one unit, once (a Qwen3-8B Q or K row in four loop trips,
# a quarter of it in flight before a PDL wait). Settable for A/B runs. Loading a 4,096-value row in one trip, as
# session 35's GLU form does, lost: H100 replay 2,224 us at (2, 2), 2,206-2,207 at (1, 2) with one- or two-warp
# halves, against 2,181 (bench/RESULTS.md, session 36)
PAIR_UNROLL = (1, 1)


def matvec_pair(xqt, first: tuple, second: tuple, pdl: tuple = (0, 0)) -> bool:
    """Two weights of one input in one launch (`mmvs.launch_pair`): first, second = (parts, qtype, n, k, out).
    Where both take the rows-as-streams form with the same warps; else nothing runs and this returns False.
    Each runs its configuration's rows a program at PAIR_UNROLL's units a thread and unroll (one, once): the kernel
    gets the registers of its heavier half, and one unit keeps them at 60-72 (32 one-warp programs a multiprocessor)."""
    cfgs = [config(q, n, k, False) for _, q, n, k, _ in (first, second)]
    if any(len(c) < 6 or c[5] != 2 for c in cfgs) or cfgs[0][2] != cfgs[1][2] or first[3] != second[3]:
        return False
    upt, u = PAIR_UNROLL
    mmvs.launch_pair(xqt, *((words(p, q, True), q, n, o, (c[0], upt, c[2], u))
                            for (p, q, n, _, o), c in zip((first, second), cfgs)), pdl=pdl)
    return True


def matvec(xqt, parts, qtype: int, n: int, k: int, out: torch.Tensor, cfg: tuple | None = None,
           glu: tuple | None = None, pdl: tuple = (0, 0)) -> None:
    """xqt = quantize_x(x) for x (T, K) -> out (T, N) f32. glu = (up weight's parts, activation code of
    `elementwise.GLU_ACTS`): out = act(x . W) * (x . W_up). pdl: the rows-as-streams form as a programmatic
    dependent launch (`mmvs.pdl_options`)."""
    xq, xd, xs = xqt
    cfg = cfg or interpreted(config(qtype, n, k, glu is not None), n, xq)
    if _streams(xqt, parts, qtype, n, k, out, cfg, glu, pdl=pdl):
        return
    bn, ng, nw, ks, *st = cfg
    a, b, c, d = words(parts, qtype)
    a2, b2, c2, d2 = words(glu[0], qtype) if glu else (a, b, c, d)
    if glu:
        ks = 1
    if ks > 1:
        out.zero_()
    unit = 32 if qtype in (8, 39) else 64
    mmvq_kernel[(triton.cdiv(n, bn), xq.shape[0] * ks)](
        xq, xd, xs, out, a, b, c, d, a2, b2, c2, d2, n, k, out.stride(0), QT=qtype, BN=bn, NG=ng, KS=ks,
        ASM=xq.is_cuda, EVEN=k % (unit * ng * ks) == 0, ACT=glu[1] if glu else -1, num_warps=nw,
        num_stages=st[0] if st else 3)


@triton.jit
def mmvq_experts_kernel(xq, xd, xs, ids, out, a, b, c, d, a2, b2, c2, d2, bias, bias2, N, K, XDIV, ES, UO,
                        QT: tl.constexpr, BN: tl.constexpr, NG: tl.constexpr, ASM: tl.constexpr,
                        EVEN: tl.constexpr, ACT: tl.constexpr, HAS_BIAS: tl.constexpr, ORDERED: tl.constexpr = False):
    """grid (cdiv(N, BN), P), P = T * NSEL (token, slot) pairs: pair p reads x row p // XDIV (XDIV =
    NSEL: one x per token, 1: one per pair) and expert e = ids[p], rows e * ES + [0, N) of the stack;
    out[p, rows] = W_e[rows] . x (+ bias[e * ES + rows]). ACT >= 0: out = act(W_e . x + bias) *
    (W2_e . x + bias2), W2's rows (and bias2's) of expert e at e * ES + UO. ORDERED: program column t takes pair
    ids[P + t] (`moe.expert_order`: one expert's pairs launched together, its rows read from memory once)."""
    p = tl.program_id(1)
    if ORDERED:
        p = tl.load(ids + tl.num_programs(1) + p)
    e = tl.load(ids + p).to(tl.int64)
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    rc = tl.where(rn < N, rn, 0)
    r = e * ES + rc
    xr = p // XDIV
    xqt, xdt, xst = xq + xr * (K // 4), xd + xr * (K // 16), xs + xr * (K // 16)
    acc = tl.zeros([BN, NG], dtype=tl.float32)
    acc2 = tl.zeros([BN, NG], dtype=tl.float32)
    if QT == 8 or QT == 39:
        units = K // 32
    else:
        units = K // 64
    for u in range(0, units, NG):
        acc += _part(a, b, c, d, xqt, xdt, xst, r, u, K, QT, ASM, NG, EVEN)
        if ACT >= 0:
            acc2 += _part(a2, b2, c2, d2, xqt, xdt, xst, r + UO, u, K, QT, ASM, NG, EVEN)
    y = tl.sum(acc, axis=1)
    if HAS_BIAS:
        y += tl.load(bias + r)
    if ACT >= 0:
        y2 = tl.sum(acc2, axis=1)
        if HAS_BIAS:
            y2 += tl.load(bias2 + r + UO)
        y = glu_act(y, y2, ACT)
    tl.store(out + p * N + rn, y, mask=rn < N)


# (ggml type, K, glu) -> (BN, NG, num_warps) of `mmvq_experts_kernel`, measured (bench/cuda_moe_sweep.py; H200,
# 2026-11-30), or a rows-as-streams configuration (V 2, kernels/mmvs.py; 2026-12-01: Qwen3.5-35B-A3B's Q4_K
# gate/up at one token 4.8 -> 3.8 us alone, 7.5 -> 4.8 with the GLU; bench/results/2026-12-01-cuda-moe-sweep-v3-streams.json)
EXPERT_CONFIG: dict[tuple[int, int, bool], tuple] = {
    (12, 2048, False): (2, 1, 1, 1, 1, 2, 1), (12, 2048, True): (2, 1, 1, 1, 1, 2, 1), (12, 512, False): (8, 8, 2),
    (14, 512, False): (4, 8, 1), (14, 768, False): (4, 8, 2), (8, 2048, False): (2, 16, 1),
    (8, 2048, True): (1, 32, 1), (8, 512, False): (8, 8, 2), (39, 2880, False): (4, 8, 1),
    (39, 2880, True): (2, 16, 1)}


def expert_config(qtype: int, k: int, glu: bool = False) -> tuple:
    """The configuration of `matvec_experts` for a row length k: EXPERT_CONFIG's, else (BN, NG, num_warps) with
    NG blocks per step as the dense CONFIG (fewer when the row is shorter), more rows per program as NG shrinks."""
    if (qtype, k, glu) in EXPERT_CONFIG:
        return EXPERT_CONFIG[qtype, k, glu]
    units = k // (32 if qtype in (8, 39) else 64)
    ng = min(CONFIG[qtype][1], triton.next_power_of_2(units))
    return max(1, 16 // ng), ng, 1


def matvec_experts(xqt, parts, qtype: int, n: int, k: int, ids: torch.Tensor, out: torch.Tensor,
                   glu: tuple | None = None, bias: tuple | None = None, expert_rows: int = 0,
                   cfg: tuple | None = None, order: torch.Tensor | None = None) -> None:
    """The selected experts of a stack of n-row experts times 8-bit activations -> out (T, NSEL, n) f32.

    xqt: `quantize_x` of x (T, K) (every slot of a token reads its row) or of x (T * NSEL, K) (one row
    per (token, slot), e.g. the down projection's input (T, NSEL, K) reshaped); ids (T, NSEL) int32
    contiguous, on the device. parts: the stack (E, expert_rows, K) uploaded as E * expert_rows rows;
    expert e's n rows start at e * expert_rows (expert_rows 0: n).
    glu = (up parts, activation code of `elementwise.GLU_ACTS`[, up row offset]): out = act(x . W_e) *
    (x . U_e), U_e's rows at e * expert_rows + offset of the up stack (a fused gate_up stack: pass the same
    parts, expert_rows 2n, offset n). bias: (E * expert_rows,) f32 arrays added before the activation,
    one (plain) or (gate bias, up bias) (with glu; the up bias indexed like U's rows). order:
    `moe.expert_order(ids)`, the pairs launched expert by expert (the same products).
    """
    xq, xd, xs = xqt
    t, nsel = ids.shape
    assert xq.shape[0] in (t, t * nsel), (xq.shape, ids.shape)
    cfg = cfg or interpreted(expert_config(qtype, k, glu is not None), n, xq)
    es = expert_rows or n
    uo = glu[2] if glu and len(glu) > 2 else 0
    xdiv = 1 if xq.shape[0] == t * nsel else nsel
    if _streams(xqt, parts, qtype, n, k, out, cfg, glu, experts=(ids, xdiv, es, uo, order), bias=bias):
        return
    bn, ng, nw, *st = cfg
    a, b, c, d = words(parts, qtype)
    a2, b2, c2, d2 = words(glu[0], qtype) if glu else (a, b, c, d)
    b1, b2_ = (bias[0], bias[-1]) if bias else (out, out)
    unit = 32 if qtype in (8, 39) else 64
    mmvq_experts_kernel[(triton.cdiv(n, bn), t * nsel)](
        xq, xd, xs, ids if order is None else order, out, a, b, c, d, a2, b2, c2, d2, b1, b2_, n, k, xdiv, es, uo,
        QT=qtype, BN=bn, NG=ng, ASM=xq.is_cuda, EVEN=k % (unit * ng) == 0, ACT=glu[1] if glu else -1,
        HAS_BIAS=bool(bias), ORDERED=order is not None, num_warps=nw, num_stages=st[0] if st else 3)
