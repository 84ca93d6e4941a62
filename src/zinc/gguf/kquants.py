"""K-quant (Q2_K..Q6_K, Q8_K) and IQ4_XS block kernels; used through ``zinc.gguf.quants``.

Dequant kernels have the signature ``kernel(blocks, out)``: ``blocks`` is (n, block_bytes) uint8,
``out`` the preallocated (n, 256) float32 result. Each one unpacks the small integers with uint8
ops, computes the per-sub-block f32 scale once (``d * sc`` as in spec quant-formats.md §2.9-2.15)
and broadcasts it, keeping the f32 evaluation order of ggml so the results are bit-exact.

Quantizers take (n, 256) float32 and return (n, block_bytes) uint8. They fit per-sub-block
scales by a small vectorized grid search with least-squares refits (in the spirit of ggml's
``make_qkx2_quants`` / ``make_qx_quants``, not bit-identical to it).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from zinc.gguf.constants import GGMLType

F32 = np.float32
F16LE = np.dtype("<f2")
U8 = np.uint8

KVALUES_IQ4NL = np.array([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113], np.int8)
_SHIFT_2BIT = np.array([0, 2, 4, 6], U8)


def _f16(b: np.ndarray, off: int) -> np.ndarray:
    """The little-endian f16 field at byte ``off`` of each block, as f32 (n, 1)."""
    return b[:, off:off + 2].view(F16LE).astype(F32)


def _split_nibbles(qs: np.ndarray, q: np.ndarray) -> None:
    """Low nibbles of ``qs`` (…, L) into ``q[..., 0, :]``, high nibbles into ``q[..., 1, :]``."""
    np.bitwise_and(qs, U8(15), out=q[..., 0, :])
    np.right_shift(qs, U8(4), out=q[..., 1, :])


def scale_min_k4(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unpack the 12-byte Q4_K/Q5_K scales field (n, 12) into six-bit scales and mins, (n, 8) each."""
    n = s.shape[0]
    a, b, c = s[:, 0:4], s[:, 4:8], s[:, 8:12]
    sc = np.empty((n, 8), U8)
    mn = np.empty((n, 8), U8)
    np.bitwise_and(a, U8(63), out=sc[:, :4])
    np.bitwise_and(b, U8(63), out=mn[:, :4])
    sc[:, 4:] = (c & U8(15)) | ((a >> U8(6)) << U8(4))
    mn[:, 4:] = (c >> U8(4)) | ((b >> U8(6)) << U8(4))
    return sc, mn


def _affine_out(out: np.ndarray, q: np.ndarray, scale: np.ndarray, minus: np.ndarray) -> None:
    """out = scale * q - minus per sub-block; q (n, S, L) ints, scale/minus (n, S) f32."""
    o = out.reshape(q.shape)
    o[...] = q
    o *= scale[:, :, None]
    o -= minus[:, :, None]


# ----------------------------------------------------------------------------- dequant kernels


def _deq_q2_k(b: np.ndarray, out: np.ndarray) -> None:
    n = b.shape[0]
    s = b[:, 0:16]
    dl = _f16(b, 80) * (s & U8(15))
    ml = _f16(b, 82) * (s >> U8(4))
    q = (b[:, 16:80].reshape(n, 2, 1, 32) >> _SHIFT_2BIT[:, None]) & U8(3)  # (n, half, shift, 32)
    _affine_out(out, q.reshape(n, 16, 16), dl, ml)


def _q3_k_scales(s: np.ndarray) -> np.ndarray:
    """The 12-byte Q3_K scales field (n, 12) -> 16 signed scales as f32 (n, 16)."""
    n = s.shape[0]
    lo = np.empty((n, 2, 8), U8)
    _split_nibbles(s[:, :8], lo)
    hi = (s[:, 8:12].reshape(n, 1, 4) >> _SHIFT_2BIT[:, None]) & U8(3)  # [n, k, i] -> j = 4k + i
    sc = lo.reshape(n, 16) | (hi.reshape(n, 16) << U8(4))
    return sc.astype(F32) - F32(32)


def _deq_q3_k(b: np.ndarray, out: np.ndarray) -> None:
    n = b.shape[0]
    dl = _f16(b, 108) * _q3_k_scales(b[:, 96:108])
    q = (b[:, 32:96].reshape(n, 2, 1, 32) >> _SHIFT_2BIT[:, None]) & U8(3)
    hbit = np.unpackbits(b[:, 0:32].reshape(n, 1, 32), axis=1, bitorder="little")  # [n, 4h+j, idx]
    q |= hbit.reshape(n, 2, 4, 32) << U8(2)
    o = out.reshape(n, 16, 16)
    o[...] = q.reshape(n, 16, 16)
    o -= F32(4)
    o *= dl[:, :, None]


def _deq_q4_k(b: np.ndarray, out: np.ndarray) -> None:
    n = b.shape[0]
    sc, mn = scale_min_k4(b[:, 4:16])
    q = np.empty((n, 4, 2, 32), U8)
    _split_nibbles(b[:, 16:144].reshape(n, 4, 32), q)
    _affine_out(out, q.reshape(n, 8, 32), _f16(b, 0) * sc, _f16(b, 2) * mn)


def _deq_q5_k(b: np.ndarray, out: np.ndarray) -> None:
    n = b.shape[0]
    sc, mn = scale_min_k4(b[:, 4:16])
    q = np.empty((n, 4, 2, 32), U8)
    _split_nibbles(b[:, 48:176].reshape(n, 4, 32), q)
    q = q.reshape(n, 8, 32)
    hbit = np.unpackbits(b[:, 16:48].reshape(n, 1, 32), axis=1, bitorder="little")  # [n, sub, l]
    q |= hbit << U8(4)
    _affine_out(out, q, _f16(b, 0) * sc, _f16(b, 2) * mn)


def _deq_q6_k(b: np.ndarray, out: np.ndarray) -> None:
    n = b.shape[0]
    q = np.empty((n, 2, 2, 2, 32), U8)  # [n, half, nibble, a, l] -> element 128h + 64nib + 32a + l
    ql = b[:, 0:128].reshape(n, 2, 2, 32)
    np.bitwise_and(ql, U8(15), out=q[:, :, 0])
    np.right_shift(ql, U8(4), out=q[:, :, 1])
    q = q.reshape(n, 2, 4, 32)
    q |= ((b[:, 128:192].reshape(n, 2, 1, 32) >> _SHIFT_2BIT[:, None]) & U8(3)) << U8(4)
    dsc = _f16(b, 208) * b[:, 192:208].view(np.int8).astype(F32)  # (n, 16)
    o = out.reshape(n, 16, 16)
    o[...] = q.reshape(n, 16, 16)
    o -= F32(32)
    o *= dsc[:, :, None]


def _deq_q8_k(b: np.ndarray, out: np.ndarray) -> None:
    out[...] = b[:, 4:260].view(np.int8)
    out *= b[:, 0:4].view("<f4").astype(F32)


def _deq_iq4_xs(b: np.ndarray, out: np.ndarray) -> None:
    n = b.shape[0]
    lo = np.empty((n, 4, 2), U8)
    sl = b[:, 4:8]
    np.bitwise_and(sl, U8(15), out=lo[:, :, 0])
    np.right_shift(sl, U8(4), out=lo[:, :, 1])
    sh = b[:, 2:4].view("<u2") >> (2 * np.arange(8, dtype=np.uint16))  # (n, 8)
    ls = lo.reshape(n, 8) | ((sh & np.uint16(3)).astype(U8) << U8(4))
    dl = _f16(b, 0) * (ls.astype(F32) - F32(32))
    q = np.empty((n, 8, 2, 16), U8)
    _split_nibbles(b[:, 8:136].reshape(n, 8, 16), q)
    o = out.reshape(n, 8, 32)
    o[...] = KVALUES_IQ4NL[q.reshape(n, 8, 32)]
    o *= dl[:, :, None]


DEQUANT_KERNELS: dict[GGMLType, Callable[[np.ndarray, np.ndarray], None]] = {
    GGMLType.Q2_K: _deq_q2_k,
    GGMLType.Q3_K: _deq_q3_k,
    GGMLType.Q4_K: _deq_q4_k,
    GGMLType.Q5_K: _deq_q5_k,
    GGMLType.Q6_K: _deq_q6_k,
    GGMLType.Q8_K: _deq_q8_k,
    GGMLType.IQ4_XS: _deq_iq4_xs,
}


# ----------------------------------------------------------------------------- quantizers


def _div0(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a / b, with 0 where b == 0 (f32)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b != 0, a / np.where(b != 0, b, F32(1)), F32(0)).astype(F32)


def fit_affine(x: np.ndarray, nmax: int, nstep: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """Per row of x (m, L): scale >= 0 and minv >= 0 minimizing |scale*q - minv - x|, q in 0..nmax."""
    n = F32(x.shape[1])
    lo = np.minimum(x.min(axis=1), F32(0))
    span = x.max(axis=1) - lo
    sx = x.sum(axis=1)
    best_s = _div0(span, F32(nmax) + np.zeros_like(span))
    best_b = lo
    best_err = np.full(x.shape[0], np.inf, F32)
    for k in range(nstep + 1):
        iscale = _div0(F32(nmax - 1 + 2 * k / nstep), span)
        q = np.clip(np.rint(iscale[:, None] * (x - lo[:, None])), 0, nmax)
        sq, sqq, sqx = q.sum(axis=1), (q * q).sum(axis=1), (q * x).sum(axis=1)
        det = n * sqq - sq * sq
        s = _div0(n * sqx - sq * sx, det)
        b = _div0(sqq * sx - sq * sqx, det)
        clamp = (b > 0) | (det <= 0)  # min above zero, or all codes equal: fit the scale alone
        s = np.where(clamp, _div0(sqx, sqq), s)
        b = np.where(clamp, F32(0), b)
        s = np.maximum(s, F32(0))
        r = s[:, None] * q + b[:, None] - x
        err = (r * r).sum(axis=1)
        better = err < best_err
        best_err = np.where(better, err, best_err)
        best_s = np.where(better, s, best_s)
        best_b = np.where(better, b, best_b)
    return best_s.astype(F32), (-best_b).astype(F32)


def fit_symmetric(x: np.ndarray, nmax: int, nstep: int = 9) -> np.ndarray:
    """Per row of x (m, L): a signed scale for q in -nmax..nmax-1 (least squares over a small grid)."""
    amax = np.abs(x).argmax(axis=1)[:, None]
    mx = np.take_along_axis(x, amax, axis=1)[:, 0]
    best_s = _div0(mx, F32(-nmax) + np.zeros_like(mx))
    best_score = np.full(x.shape[0], -np.inf, F32)
    for k in range(-nstep, nstep + 1):
        iscale = _div0(F32(-(nmax + 0.1 * k)), mx)
        q = np.clip(np.rint(iscale[:, None] * x), -nmax, nmax - 1)
        sqq, sqx = (q * q).sum(axis=1), (q * x).sum(axis=1)
        score = np.where(sqq > 0, _div0(sqx * sqx, sqq), F32(-np.inf))
        better = score > best_score
        best_score = np.where(better, score, best_score)
        best_s = np.where(better, _div0(sqx, sqq), best_s)
    return best_s.astype(F32)


def _f16_round(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """f32 values -> (their f16 bytes (n, 2), the f16 values back as f32 (n,))."""
    with np.errstate(over="ignore"):
        h = v.astype(F16LE)
    return h.view(U8).reshape(-1, 2), h.astype(F32)


def _super_scale(v: np.ndarray, top: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Non-negative (n, S) values -> (f16 bytes of d, d as f32 (n, 1), codes 0..top (n, S))."""
    vmax = v.max(axis=1)
    dbytes, d = _f16_round(vmax / F32(top))
    codes = np.clip(np.rint(v * _div0(F32(top), vmax)[:, None]), 0, top).astype(U8)
    return dbytes, d[:, None], codes


def _pack_scale_min_k4(sc: np.ndarray, mn: np.ndarray) -> np.ndarray:
    """Six-bit scales and mins (n, 8) -> the 12-byte field (inverse of ``scale_min_k4``)."""
    out = np.empty((sc.shape[0], 12), U8)
    out[:, 0:4] = sc[:, :4] | ((sc[:, 4:] >> U8(4)) << U8(6))
    out[:, 4:8] = mn[:, :4] | ((mn[:, 4:] >> U8(4)) << U8(6))
    out[:, 8:12] = (sc[:, 4:] & U8(15)) | ((mn[:, 4:] & U8(15)) << U8(4))
    return out


def _quant_kx(x: np.ndarray, nmax: int) -> tuple[np.ndarray, np.ndarray]:
    """Q4_K/Q5_K common part: header (n, 16) bytes (d, dmin, scales) and codes q (n, 8, 32)."""
    n = x.shape[0]
    xs = x.reshape(n * 8, 32)
    s, m = fit_affine(xs, nmax)
    dbytes, d, sc = _super_scale(s.reshape(n, 8), 63)
    mbytes, dmin, mq = _super_scale(m.reshape(n, 8), 63)
    eff_d = (d * sc).reshape(n, 8, 1)
    eff_m = (dmin * mq).reshape(n, 8, 1)
    q = np.rint(_div0(x.reshape(n, 8, 32) + eff_m, np.broadcast_to(eff_d, (n, 8, 32))))
    q = np.clip(q, 0, nmax).astype(U8)
    head = np.concatenate([dbytes, mbytes, _pack_scale_min_k4(sc, mq)], axis=1)
    return head, q


def _pack_k_nibbles(q: np.ndarray) -> np.ndarray:
    """Codes (n, 8, 32) -> qs (n, 128): group g byte l = sub 2g low nibble | sub 2g+1 high nibble."""
    q = q.reshape(q.shape[0], 4, 2, 32) & U8(15)
    return (q[:, :, 0] | (q[:, :, 1] << U8(4))).reshape(q.shape[0], 128)


def _quant_q4_k(x: np.ndarray) -> np.ndarray:
    head, q = _quant_kx(x, 15)
    return np.concatenate([head, _pack_k_nibbles(q)], axis=1)


def _quant_q5_k(x: np.ndarray) -> np.ndarray:
    head, q = _quant_kx(x, 31)
    qh = np.packbits((q >> U8(4)) & U8(1), axis=1, bitorder="little").reshape(q.shape[0], 32)
    return np.concatenate([head, qh, _pack_k_nibbles(q)], axis=1)


def _quant_q6_k(x: np.ndarray) -> np.ndarray:
    n = x.shape[0]
    s = fit_symmetric(x.reshape(n * 16, 16), 32).reshape(n, 16)
    i = np.abs(s).argmax(axis=1)[:, None]
    smax = np.take_along_axis(s, i, axis=1)
    iscale = _div0(F32(-128), smax)
    sc = np.clip(np.rint(iscale * s), -128, 127).astype(np.int8)
    dbytes, d = _f16_round(_div0(F32(1), iscale)[:, 0])
    eff = d[:, None] * sc.astype(F32)
    q = np.rint(_div0(x.reshape(n, 16, 16), np.broadcast_to(eff[:, :, None], (n, 16, 16))))
    q = (np.clip(q, -32, 31) + 32).astype(U8).reshape(n, 2, 4, 32)  # [n, half, c, l]
    ql = (q[:, :, 0:2] & U8(15)) | ((q[:, :, 2:4] & U8(15)) << U8(4))
    qh = ((q >> U8(4)) << _SHIFT_2BIT[:, None]).sum(axis=2, dtype=U8)
    parts = [ql.reshape(n, 128), qh.reshape(n, 64), sc.view(U8), dbytes]
    return np.concatenate(parts, axis=1)


QUANT_FUNCS: dict[GGMLType, Callable[[np.ndarray], np.ndarray]] = {
    GGMLType.Q4_K: _quant_q4_k,
    GGMLType.Q5_K: _quant_q5_k,
    GGMLType.Q6_K: _quant_q6_k,
}
