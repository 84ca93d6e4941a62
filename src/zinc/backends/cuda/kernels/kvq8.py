"""KV cells stored as q8_0 (`zinc.backends.base.Q8Cells`): the store and load halves the cache kernels share.

A cell's head of D values is D / 32 ggml q8_0 blocks, kept as two planes: int8 values q (S, H, D) and f16
scales d (S, H, D / 32). `store` quantizes as ggml's quantize_row_q8_0_ref does (d = amax / 127, values
rounded half away from zero after multiplying by 1 / d), so the cells equal the NumPy backend's bit for bit.
`load_rows` / `load_cols` give a tile of dequantized values q * d for the attention kernels' f16 tensor-core
operands: the product (at most 19 significant bits) rounded to f16, a relative change of at most 2^-11, against
the 2^-8 of the quantization itself. Each loads whole blocks (32 int8 values, one scale) as vectors, which the
kernels' pipelines stage in shared memory (cp.async) as they do f16 tiles.
"""

from __future__ import annotations

import triton
import triton.language as tl

from zinc.backends.base import Q8Cells


def planes(cells) -> tuple:
    """(values, scales) of KV cells for a kernel's two pointers: a `Q8Cells`' planes, or an f16 / f32 tensor twice
    (its kernel ignores the second)."""
    return (cells.q, cells.d) if isinstance(cells, Q8Cells) else (cells, cells)


@triton.jit
def store(x, qp, dp, NB, ok, NBP: tl.constexpr):
    """x (NBP, 32) f32, blocks of 32 values: block b < NB (where ok) as q8_0, its values at qp + 32 b (int8)
    and its scale at dp + b (f16)."""
    b = tl.arange(0, NBP)
    i = tl.arange(0, 32)
    amax = tl.max(tl.abs(x), axis=1)
    d = tl.math.div_rn(amax, 127.0)
    inv = tl.where(d > 0, tl.math.div_rn(1.0, tl.where(d > 0, d, 1.0)), 0.0)
    s = x * inv[:, None]
    a = tl.abs(s)
    t = tl.floor(a)
    t = tl.where(a - t >= 0.5, t + 1.0, t)  # C roundf: halves away from zero
    q = tl.where(s < 0, -t, t).to(tl.int32).to(tl.int8)
    bm = (b < NB) & ok
    tl.store(qp + b[:, None] * 32 + i[None, :], q, mask=bm[:, None])
    tl.store(dp + b, d.to(tl.float16), mask=bm)


@triton.jit
def _dequant(qv, dv, OUT: tl.constexpr):
    """q * d as OUT (f16: one f16 product of exact operands, the exact product rounded as from f32)."""
    if OUT == tl.float16:
        return qv.to(tl.float16) * dv
    return (qv.to(tl.float32) * dv.to(tl.float32)).to(OUT)


@triton.jit
def load_rows(qp, dp, ch, cm, D: tl.constexpr, NBP: tl.constexpr, OUT: tl.constexpr):
    """Dequantized values (q * d, as OUT: f16 or f32) of the head rows ch (BS,) where cm: (BS, NBP * 32), each
    row's NBP blocks loaded as (BS, NBP, 32) values beside (BS, NBP, 1) scales (whole vectors, no gather); one
    block a row as (BS, 32) beside (BS, 1)."""
    if NBP == 1:
        qv = tl.load(qp + ch[:, None] * D + tl.arange(0, 32)[None, :], mask=cm[:, None], other=0)
        dv = tl.load(dp + ch[:, None] * (D // 32), mask=cm[:, None], other=0.0)
        return _dequant(qv, dv, OUT)
    b = tl.arange(0, NBP)[None, :, None]
    m = cm[:, None, None] & (b < D // 32)
    qv = tl.load(qp + ch[:, None, None] * D + b * 32 + tl.arange(0, 32)[None, None, :], mask=m, other=0)
    dv = tl.load(dp + ch[:, None, None] * (D // 32) + b, mask=m, other=0.0)
    return tl.reshape(_dequant(qv, dv, OUT), (ch.shape[0], NBP * 32))


@triton.jit
def load_cols(qp, dp, ch, cm, D: tl.constexpr, NBP: tl.constexpr, OUT: tl.constexpr):
    """`load_rows` transposed: (NBP * 32, BS), from (NBP, 32, BS) values and (NBP, 1, BS) scales."""
    if NBP == 1:
        qv = tl.load(qp + ch[None, :] * D + tl.arange(0, 32)[:, None], mask=cm[None, :], other=0)
        dv = tl.load(dp + ch[None, :] * (D // 32), mask=cm[None, :], other=0.0)
        return _dequant(qv, dv, OUT)
    b = tl.arange(0, NBP)[:, None, None]
    m = cm[None, None, :] & (b < D // 32)
    qv = tl.load(qp + ch[None, None, :] * D + b * 32 + tl.arange(0, 32)[None, :, None], mask=m, other=0)
    dv = tl.load(dp + ch[None, None, :] * (D // 32) + b, mask=m, other=0.0)
    return tl.reshape(_dequant(qv, dv, OUT), (NBP * 32, ch.shape[0]))
