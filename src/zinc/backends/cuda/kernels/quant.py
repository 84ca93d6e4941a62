"""Dequantize-to-tile (prefill GEMM operands, embedding rows) for Q4_K, Q6_K, Q8_0; matvec.py has the decode matvec.

Weights are repacked at upload from raw GGUF blocks into plain per-field arrays (see
`zinc.backends.cuda.weights`), one row of the (N, K) matrix after another:

* Q4_K: qs u8 (N, K/2) (the 128 nibble bytes of each block), sc u8 / mn u8 (N, K/32) (the six-bit
  scales and mins, unpacked), dm f16 (N, 2*K/256) (d, dmin of each block), sm4 i32 (N, K/64) (see matvec.py);
* Q6_K: ql u8 (N, K/2), qh u8 (N, K/4), sc i8 (N, K/16), d f16 (N, K/256);
* Q8_0: qs i8 (N, K), d f16 (N, K/32).

Each kernel walks K one 256-value super-block at a time (Q8_0: eight 32-value blocks) and builds
that super-block's values as a (BN, G, L) tile whose flattened (G, L) index is the value's position
in the super-block, so the matching activations are one contiguous load.
"""

from __future__ import annotations

import triton
import triton.language as tl

QK = 256  # values per super-block (a K-quant block, or 8 Q8_0 blocks)


@triton.jit
def _tile_q4k(a, b, c, d, r, kb, K):
    """Q4_K super-block kb of rows r (BN,) int64 -> (BN, 8, 32) f32."""
    g = tl.arange(0, 8)[None, :, None]
    l = tl.arange(0, 32)[None, None, :]
    rr = r[:, None, None]
    q = tl.load(a + rr * (K // 2) + kb * 128 + (g // 2) * 32 + l).to(tl.int32)
    q = (q >> ((g % 2) * 4)) & 15
    so = r[:, None] * (K // 32) + kb * 8 + tl.arange(0, 8)[None, :]
    sc = tl.load(b + so).to(tl.float32)
    mn = tl.load(c + so).to(tl.float32)
    dd = tl.load(d + r * (K // 128) + kb * 2).to(tl.float32)
    dmin = tl.load(d + r * (K // 128) + kb * 2 + 1).to(tl.float32)
    scale = (dd[:, None] * sc)[:, :, None]
    minus = (dmin[:, None] * mn)[:, :, None]
    return q.to(tl.float32) * scale - minus


@triton.jit
def _tile_q6k(a, b, c, d, r, kb, K):
    """Q6_K super-block kb of rows r -> (BN, 16, 16) f32 (16 chunks of 16 values, one scale each)."""
    ch = tl.arange(0, 16)[None, :, None]
    i = tl.arange(0, 16)[None, None, :]
    rr = r[:, None, None]
    h = ch // 8
    cc = ch % 8
    gq = cc // 2
    l = (cc % 2) * 16 + i
    ql = tl.load(a + rr * (K // 2) + kb * 128 + h * 64 + (gq % 2) * 32 + l).to(tl.int32)
    qh = tl.load(b + rr * (K // 4) + kb * 64 + h * 32 + l).to(tl.int32)
    q = ((ql >> ((gq // 2) * 4)) & 15) | (((qh >> (gq * 2)) & 3) << 4)
    sc = tl.load(c + r[:, None] * (K // 16) + kb * 16 + tl.arange(0, 16)[None, :]).to(tl.float32)
    dd = tl.load(d + r * (K // 256) + kb).to(tl.float32)
    scale = (dd[:, None] * sc)[:, :, None]
    return (q - 32).to(tl.float32) * scale


@triton.jit
def _tile_q80(a, b, c, d, r, kb, K):
    """Q8_0 blocks 8*kb .. 8*kb+7 of rows r -> (BN, 8, 32) f32 (blocks past K read as 0)."""
    g = tl.arange(0, 8)[None, :, None]
    l = tl.arange(0, 32)[None, None, :]
    rr = r[:, None, None]
    blk = kb * 8 + g
    ok = blk < K // 32
    q = tl.load(a + rr * K + blk * 32 + l, mask=ok, other=0).to(tl.float32)
    so = r[:, None] * (K // 32) + kb * 8 + tl.arange(0, 8)[None, :]
    sd = tl.load(b + so, mask=(kb * 8 + tl.arange(0, 8)[None, :]) < K // 32, other=0).to(tl.float32)
    return q * sd[:, :, None]


@triton.jit
def _tile(a, b, c, d, r, kb, K, QT: tl.constexpr):
    if QT == 12:
        return _tile_q4k(a, b, c, d, r, kb, K)
    elif QT == 14:
        return _tile_q6k(a, b, c, d, r, kb, K)
    else:
        return _tile_q80(a, b, c, d, r, kb, K)


@triton.jit
def dequant_kernel(out, rows, a, b, c, d, N, K, so,
                   QT: tl.constexpr, G: tl.constexpr, L: tl.constexpr, BN: tl.constexpr,
                   HAS_ROWS: tl.constexpr):
    """out[n, :] = W[rows[n], :] (or W[n, :]); grid (cdiv(N, BN), cdiv(K, 256)); out f16 or f32."""
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    kb = tl.program_id(1)
    rc = tl.where(rn < N, rn, 0)
    if HAS_ROWS:
        r = tl.load(rows + rc).to(tl.int64)
    else:
        r = rc.to(tl.int64)
    w = _tile(a, b, c, d, r, kb, K, QT)
    xo = (tl.arange(0, G)[:, None] * L + tl.arange(0, L)[None, :])[None, :, :] + kb * 256
    mask = (rn[:, None, None] < N) & (xo < K)
    tl.store(out + rn.to(tl.int64)[:, None, None] * so + xo, w, mask=mask)


TILE = {12: (8, 32), 14: (16, 16), 8: (8, 32)}  # ggml type -> (G, L) of the super-block tile


def dequant(parts, qtype: int, n: int, k: int, out, rows=None, bn: int = 16, num_warps: int = 4) -> None:
    """Launch `dequant_kernel`: out (n, K) gets the rows (all, or `rows` (n,) int) of the weight."""
    g, l = TILE[qtype]
    a, b, c, d = (list(parts) + [parts[0]] * 4)[:4]
    dequant_kernel[(triton.cdiv(n, bn), triton.cdiv(k, QK))](
        out, rows if rows is not None else out, a, b, c, d, n, k, out.stride(0),
        QT=qtype, G=g, L=l, BN=bn, HAS_ROWS=rows is not None, num_warps=num_warps)
