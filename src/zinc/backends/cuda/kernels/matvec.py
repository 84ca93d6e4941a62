"""Decode matvec v2: out[t, n] = x[t] . W[n] with contiguous byte tiles and per-sub-block sums.

Each program owns BN rows and walks K in chunks of NSB super-blocks (NSB*256 values). The quant
bytes of a chunk are one contiguous run per row (16-byte loads); values are multiplied with the
activations inside a sub-block and summed there first, so each scale is applied once per
sub-block, not once per value. Layouts as in `quant` (Q4_K also carries `sm4`: per 64 values the
int32 of bytes sc[2g], sc[2g+1], mn[2g], mn[2g+1]).
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def _f(q):
    """Small non-negative int32 -> f32 through the exponent trick (full-rate ALU, no I2F)."""
    return (q | 0x4B000000).to(tl.float32, bitcast=True) - 8388608.0


@triton.jit
def _chunk_q4k(qs, sm4, dm, x, r, c0, K, sa, NSB: tl.constexpr):
    """Partial dot of rows r (BN,) int64 with x over super-blocks [c0, c0 + NSB) -> (BN, 4*NSB)."""
    NG: tl.constexpr = 4 * NSB
    g = tl.arange(0, NG)
    l = tl.arange(0, 32)
    gg = c0 * 4 + g  # 64-value group index within the row
    ok = gg < K // 64
    q = tl.load(qs + r[:, None, None] * sa + gg[None, :, None] * 32 + l[None, None, :],
                mask=ok[None, :, None], other=0).to(tl.int32)
    xo = gg[:, None] * 64 + l[None, :]
    xl = tl.load(x + xo, mask=ok[:, None], other=0.0)
    xh = tl.load(x + xo + 32, mask=ok[:, None], other=0.0)
    sl = tl.sum(_f(q & 15) * xl[None, :, :], axis=2)  # (BN, NG)
    sh = tl.sum(_f(q >> 4) * xh[None, :, :], axis=2)
    v = tl.load(sm4 + r[:, None] * (K // 64) + gg[None, :], mask=ok[None, :], other=0)
    dmo = r[:, None] * (K // 128) + (gg[None, :] // 4) * 2
    d = tl.load(dm + dmo, mask=ok[None, :], other=0.0).to(tl.float32)
    dmin = tl.load(dm + dmo + 1, mask=ok[None, :], other=0.0).to(tl.float32)
    scl = (v & 255).to(tl.float32)
    sch = ((v >> 8) & 255).to(tl.float32)
    mnl = ((v >> 16) & 255).to(tl.float32)
    mnh = ((v >> 24) & 255).to(tl.float32)
    xsl = tl.sum(xl, axis=1)[None, :]
    xsh = tl.sum(xh, axis=1)[None, :]
    return d * (scl * sl + sch * sh) - dmin * (mnl * xsl + mnh * xsh)


@triton.jit
def _chunk_q6k(ql, qh, sc, dd, x, r, c0, K, sa, sb, NSB: tl.constexpr):
    """Q6_K: groups of 16 bytes of ql; G2 = ((sb*2 + h)*2 + a)*2 + p -> (BN, 8*NSB)."""
    NG: tl.constexpr = 8 * NSB
    g = c0 * 8 + tl.arange(0, NG)
    i = tl.arange(0, 16)
    ok = g < K // 32
    rr = r[:, None, None]
    m3 = ok[None, :, None]
    lo = tl.load(ql + rr * sa + g[None, :, None] * 16 + i[None, None, :], mask=m3, other=0).to(tl.int32)
    qho = (g // 4) * 32 + (g % 2) * 16
    hb = tl.load(qh + rr * sb + qho[None, :, None] + i[None, None, :], mask=m3, other=0).to(tl.int32)
    a2 = (((g // 2) % 2) * 2)[None, :, None]
    ql_lo = (lo & 15) | (((hb >> a2) & 3) << 4)
    ql_hi = (lo >> 4) | (((hb >> (a2 + 4)) & 3) << 4)
    xo = ((g // 4) * 128 + (g % 4) * 16)[:, None] + i[None, :]
    xl = tl.load(x + xo, mask=ok[:, None], other=0.0)
    xh = tl.load(x + xo + 64, mask=ok[:, None], other=0.0)
    sl = tl.sum(_f(ql_lo) * xl[None, :, :], axis=2) - 32.0 * tl.sum(xl, axis=1)[None, :]
    sh = tl.sum(_f(ql_hi) * xh[None, :, :], axis=2) - 32.0 * tl.sum(xh, axis=1)[None, :]
    so = r[:, None] * (K // 16) + ((g // 4) * 8 + g % 4)[None, :]
    s_lo = tl.load(sc + so, mask=ok[None, :], other=0).to(tl.float32)
    s_hi = tl.load(sc + so + 4, mask=ok[None, :], other=0).to(tl.float32)
    d = tl.load(dd + r[:, None] * (K // 256) + (g // 8)[None, :], mask=ok[None, :], other=0.0).to(tl.float32)
    return d * (s_lo * sl + s_hi * sh)


@triton.jit
def _chunk_q80(qs, dd, x, r, c0, K, sa, NSB: tl.constexpr):
    """Q8_0: 8*NSB blocks of 32 -> (BN, 8*NSB)."""
    NG: tl.constexpr = 8 * NSB
    g = c0 * 8 + tl.arange(0, NG)
    l = tl.arange(0, 32)
    ok = g < K // 32
    q = tl.load(qs + r[:, None, None] * sa + g[None, :, None] * 32 + l[None, None, :],
                mask=ok[None, :, None], other=0).to(tl.int32)
    q = _f(q & 255) - tl.where(q < 0, 256.0, 0.0)  # int8 bytes, via their unsigned value
    xv = tl.load(x + g[:, None] * 32 + l[None, :], mask=ok[:, None], other=0.0)
    d = tl.load(dd + r[:, None] * (K // 32) + g[None, :], mask=ok[None, :], other=0.0).to(tl.float32)
    return d * tl.sum(q * xv[None, :, :], axis=2)


@triton.jit
def matvec2_kernel(x, out, a, b, c, d, N, K, sx, so, sa, sb, QT: tl.constexpr, BN: tl.constexpr,
                   NSB: tl.constexpr, KS: tl.constexpr):
    """grid (cdiv(N, BN), T * KS); x f32 (T, K), out f32 (T, N) (zeroed first when KS > 1: the KS
    programs of a row block take every KS-th chunk of K and add their sums atomically)."""
    t = tl.program_id(1) // KS
    ks = tl.program_id(1) % KS
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    r = tl.where(rn < N, rn, 0).to(tl.int64)
    xt = x + t * sx
    if QT == 12:
        acc = tl.zeros([BN, 4 * NSB], dtype=tl.float32)
    else:
        acc = tl.zeros([BN, 8 * NSB], dtype=tl.float32)
    for k0 in range(ks * 256 * NSB, K, 256 * NSB * KS):
        c0 = k0 // 256
        if QT == 12:
            acc += _chunk_q4k(a, b, c, xt, r, c0, K, sa, NSB)
        elif QT == 14:
            acc += _chunk_q6k(a, b, c, d, xt, r, c0, K, sa, sb, NSB)
        else:
            acc += _chunk_q80(a, b, xt, r, c0, K, sa, NSB)
    if KS == 1:
        tl.store(out + t * so + rn, tl.sum(acc, axis=1), mask=rn < N)
    else:
        tl.atomic_add(out + t * so + rn, tl.sum(acc, axis=1), mask=rn < N)


# ggml type -> (BN, NSB, num_warps), from the H200 sweep of profile.py (Qwen3-8B shapes)
CONFIG = {12: (4, 4, 2), 14: (4, 8, 4), 8: (8, 4, 4)}
WIDE = {14: (4, 2, 2)}  # N >= 65536 (the output matrix)


def config(qtype: int, n: int) -> tuple[int, int, int]:
    return WIDE.get(qtype, CONFIG[qtype]) if n >= 65536 else CONFIG[qtype]


def matvec_parts(parts, qtype: int):
    """The arrays matvec2 reads, in its argument order."""
    if qtype == 12:  # qs, sc, mn, dm, sm4
        return parts[0], parts[4], parts[3], parts[0]
    if qtype == 14:
        return parts
    return parts[0], parts[1], parts[0], parts[0]


def matvec(x, parts, qtype: int, n: int, k: int, out, bn: int = 0, nsb: int = 0, num_warps: int = 0,
           ks: int = 1, num_stages: int = 3) -> None:
    """x (T, K) f32 contiguous -> out (T, N) f32."""
    cbn, cnsb, cw = config(qtype, n)
    bn, nsb, num_warps = bn or cbn, nsb or cnsb, num_warps or cw
    a, b, c, d = matvec_parts(parts, qtype)
    if ks > 1:
        out.zero_()
    matvec2_kernel[(triton.cdiv(n, bn), x.shape[0] * ks)](x, out, a, b, c, d, n, k, x.stride(0), out.stride(0),
                                                   a.stride(0), b.stride(0),
                                                   QT=qtype, BN=bn, NSB=nsb, KS=ks, num_warps=num_warps,
                                                   num_stages=num_stages)
