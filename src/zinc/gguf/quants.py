"""ggml block formats in NumPy: dequantizers (the bit-exact reference), quantizers, random blocks.

``dequantize(raw, ggml_type, n_elements)`` turns raw GGUF tensor bytes into float32 and equals
``gguf.quants.dequantize`` bit for bit (spec quant-formats.md §2: every product and sum is an f32
operation in the order written there). All decoders are vectorized over blocks; the only Python
loop walks over chunks of a few thousand blocks so that temporaries stay in cache.

``quantize(x, ggml_type)`` writes valid blocks: the 32-element types and MXFP4/BF16 exactly as
ggml's reference quantizers do, the K-quants with a small scale search of their own.
``random_blocks`` makes random but valid blocks fast (GB/s), for synthetic benchmark models.
The K-quant and IQ4_XS kernels live in ``kquants.py``; this module is the public face.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from zinc.errors import QuantError
from zinc.gguf import kquants as _k
from zinc.gguf.constants import BLOCK_LAYOUT, GGMLType, ggml_type as _ggml_type

__all__ = [
    "block_layout",
    "dequantize",
    "dequantize_rows",
    "quantize",
    "random_blocks",
    "supported_types",
    "quantizable_types",
]

F32 = np.float32
F16LE = np.dtype("<f2")

# ggml's non-linear 4-bit table (IQ4_NL, IQ4_XS) and the doubled E2M1 table of MXFP4.
KVALUES_IQ4NL = _k.KVALUES_IQ4NL
KVALUES_FP4 = np.array([0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12], np.int8)

CHUNK_WEIGHTS = 1 << 20  # weights decoded per step (about 4 MB of f32 output)

Kernel = Callable[[np.ndarray, np.ndarray], None]


# ----------------------------------------------------------------------------- type handling


def _resolve(t: "int | str | GGMLType") -> GGMLType:
    try:
        return _ggml_type(t)
    except ValueError as e:
        raise QuantError(str(e)) from None


def block_layout(t: "int | str | GGMLType") -> tuple[int, int]:
    """(elements per block, bytes per block) of a ggml type given as id, name or GGMLType."""
    return BLOCK_LAYOUT[_resolve(t)]


def _as_u8(raw: object) -> np.ndarray:
    """A flat uint8 view of ``raw`` (bytes-like or ndarray); copies only a non-contiguous array."""
    if isinstance(raw, np.ndarray):
        a = raw if raw.flags.c_contiguous else np.ascontiguousarray(raw)
        return a.reshape(-1).view(np.uint8)
    try:
        mv = memoryview(raw)  # type: ignore[arg-type]
    except TypeError:
        raise QuantError(f"raw must be bytes-like or a numpy array, got {type(raw).__name__}") from None
    if not mv.c_contiguous:
        raise QuantError("raw buffer is not contiguous")
    return np.frombuffer(mv.cast("B"), dtype=np.uint8)


def _f16(b: np.ndarray, off: int) -> np.ndarray:
    """The little-endian f16 field at byte ``off`` of each block, as f32 (n, 1)."""
    return b[:, off:off + 2].view(F16LE).astype(F32)


def _nibbles(qs: np.ndarray) -> np.ndarray:
    """(n, 16) bytes -> (n, 32) uint8: low nibbles are elements 0..15, high nibbles 16..31."""
    n = qs.shape[0]
    q = np.empty((n, 2, 16), np.uint8)
    np.bitwise_and(qs, np.uint8(15), out=q[:, 0])
    np.right_shift(qs, np.uint8(4), out=q[:, 1])
    return q.reshape(n, 32)


def _fifth_bits(qh: np.ndarray) -> np.ndarray:
    """(n, 4) bytes of a little-endian u32 ``qh`` -> (n, 32) uint8: bit j as 0 or 16 in column j."""
    bits = np.unpackbits(qh, axis=1, bitorder="little")
    return np.left_shift(bits, np.uint8(4), out=bits)


# ----------------------------------------------------------------------------- 32-element kernels


def _deq_q4_0(b: np.ndarray, out: np.ndarray) -> None:
    out[...] = _nibbles(b[:, 2:18])
    out -= F32(8)
    out *= _f16(b, 0)


def _deq_q4_1(b: np.ndarray, out: np.ndarray) -> None:
    out[...] = _nibbles(b[:, 4:20])
    out *= _f16(b, 0)
    out += _f16(b, 2)


def _deq_q5_0(b: np.ndarray, out: np.ndarray) -> None:
    q = _nibbles(b[:, 6:22])
    q |= _fifth_bits(b[:, 2:6])
    out[...] = q
    out -= F32(16)
    out *= _f16(b, 0)


def _deq_q5_1(b: np.ndarray, out: np.ndarray) -> None:
    q = _nibbles(b[:, 8:24])
    q |= _fifth_bits(b[:, 4:8])
    out[...] = q
    out *= _f16(b, 0)
    out += _f16(b, 2)


def _deq_q8_0(b: np.ndarray, out: np.ndarray) -> None:
    out[...] = b[:, 2:34].view(np.int8)
    out *= _f16(b, 0)


def _deq_q8_1(b: np.ndarray, out: np.ndarray) -> None:
    out[...] = b[:, 4:36].view(np.int8)
    out *= _f16(b, 0)


def _deq_iq4_nl(b: np.ndarray, out: np.ndarray) -> None:
    out[...] = KVALUES_IQ4NL[_nibbles(b[:, 2:18])]
    out *= _f16(b, 0)


def e8m0_half(e: np.ndarray) -> np.ndarray:
    """E8M0 byte -> f32 ``2**(e - 128)`` exactly (ggml_e8m0_to_fp32_half), same shape."""
    e32 = e.astype(np.uint32)
    bits = np.where(e32 < 2, np.uint32(0x00200000) << e32, (e32 - np.uint32(1)) << np.uint32(23))
    return bits.astype(np.uint32).view(F32)


def _deq_mxfp4(b: np.ndarray, out: np.ndarray) -> None:
    out[...] = KVALUES_FP4[_nibbles(b[:, 1:17])]
    out *= e8m0_half(b[:, 0:1])


# ----------------------------------------------------------------------------- element types


def _float_reader(dtype: str) -> Callable[[np.ndarray], np.ndarray]:
    def read(buf: np.ndarray) -> np.ndarray:
        return buf.view(dtype).astype(F32)

    return read


def _read_f32(buf: np.ndarray) -> np.ndarray:
    return buf.view("<f4").astype(F32, copy=True)


def _read_bf16(buf: np.ndarray) -> np.ndarray:
    return (buf.view("<u2").astype(np.uint32) << np.uint32(16)).view(F32)


_ELEMENTWISE: dict[GGMLType, Callable[[np.ndarray], np.ndarray]] = {
    GGMLType.F32: _read_f32,
    GGMLType.F16: _float_reader("<f2"),
    GGMLType.BF16: _read_bf16,
    GGMLType.F64: _float_reader("<f8"),
    GGMLType.I8: _float_reader("i1"),
    GGMLType.I16: _float_reader("<i2"),
    GGMLType.I32: _float_reader("<i4"),
    GGMLType.I64: _float_reader("<i8"),
}

_BLOCKWISE: dict[GGMLType, Kernel] = {
    GGMLType.Q4_0: _deq_q4_0,
    GGMLType.Q4_1: _deq_q4_1,
    GGMLType.Q5_0: _deq_q5_0,
    GGMLType.Q5_1: _deq_q5_1,
    GGMLType.Q8_0: _deq_q8_0,
    GGMLType.Q8_1: _deq_q8_1,
    GGMLType.IQ4_NL: _deq_iq4_nl,
    GGMLType.MXFP4: _deq_mxfp4,
    **_k.DEQUANT_KERNELS,
}


def supported_types() -> list[GGMLType]:
    """Every ggml type ``dequantize`` and ``random_blocks`` accept."""
    return sorted([*_ELEMENTWISE, *_BLOCKWISE])


# ----------------------------------------------------------------------------- dequantize


def dequantize(raw: object, ggml_type: "int | str | GGMLType", n_elements: int) -> np.ndarray:
    """Decode the first ``n_elements`` values of ``raw`` (ggml blocks of ``ggml_type``) to float32.

    ``raw`` is bytes-like or a contiguous ndarray (viewed as bytes, not copied); it must hold at
    least the needed bytes, any excess is ignored. Returns a new 1-D float32 array.
    Raises QuantError for an unknown or unsupported type, a partial block or too few bytes.
    """
    t = _resolve(ggml_type)
    if t not in _ELEMENTWISE and t not in _BLOCKWISE:
        raise QuantError(f"dequantize: ggml type {t.name} ({int(t)}) is not supported")
    blk, nbytes = BLOCK_LAYOUT[t]
    n_elements = int(n_elements)
    if n_elements < 0 or n_elements % blk:
        raise QuantError(f"{t.name}: {n_elements} elements is not a multiple of the block size {blk}")
    n_blocks = n_elements // blk
    need = n_blocks * nbytes
    buf = _as_u8(raw)
    if buf.size < need:
        raise QuantError(f"{t.name}: {n_elements} elements need {need} bytes, got {buf.size}")
    buf = buf[:need]
    if t in _ELEMENTWISE:
        return _ELEMENTWISE[t](buf)
    kernel = _BLOCKWISE[t]
    blocks = buf.reshape(n_blocks, nbytes)
    out = np.empty((n_blocks, blk), F32)
    step = max(1, CHUNK_WEIGHTS // blk)
    with np.errstate(over="ignore", invalid="ignore"):  # huge scales decode to inf, as in ggml
        for s in range(0, n_blocks, step):
            kernel(blocks[s:s + step], out[s:s + step])
    return out.reshape(-1)


def dequantize_rows(raw: object, ggml_type: "int | str | GGMLType", shape: "tuple[int, ...]") -> np.ndarray:
    """Dequantize a tensor of numpy ``shape`` (rows of ``shape[-1]`` values; GGUF ``ne`` reversed)."""
    shape = tuple(int(s) for s in shape)
    blk = block_layout(ggml_type)[0]
    if shape and shape[-1] % blk:
        raise QuantError(f"row length {shape[-1]} is not a multiple of the block size {blk}")
    return dequantize(raw, ggml_type, int(np.prod(shape, dtype=np.int64))).reshape(shape)


# ----------------------------------------------------------------------------- quantizers


def _roundf(v: np.ndarray) -> np.ndarray:
    """C ``roundf`` in f32: nearest integer, halves away from zero."""
    a = np.abs(v)
    t = np.trunc(a)
    t += (a - t) >= F32(0.5)
    return np.copysign(t, v)


def _safe_inv(d: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(d != 0, F32(1) / d, F32(0)).astype(F32)


def _f16_bytes(v: np.ndarray) -> np.ndarray:
    """f32 (n, 1) -> (n, 2) uint8 of the f16 value, rounded to nearest even."""
    with np.errstate(over="ignore"):
        return v.astype(F16LE).view(np.uint8).reshape(-1, 2)


def _signed_absmax(x: np.ndarray) -> np.ndarray:
    """The value with the largest magnitude along the last axis (keepdims)."""
    i = np.abs(x).argmax(axis=-1)[..., None]
    return np.take_along_axis(x, i, axis=-1)


def _pack_nibbles(q: np.ndarray) -> np.ndarray:
    """(n, 32) values 0..15 -> (n, 16) bytes: element j low nibble, element j+16 high nibble."""
    return (q[:, :16] | (q[:, 16:] << np.uint8(4))).astype(np.uint8)


def _q_sym(x: np.ndarray, nmax: int, half: int) -> tuple[np.ndarray, np.ndarray]:
    """Q4_0/Q5_0 reference: d = max/-half, q = min(nmax, trunc(x/d + half + 0.5))."""
    d = _signed_absmax(x) / F32(-half)
    q = np.trunc(x * _safe_inv(d) + F32(half + 0.5))
    return d, np.clip(q, 0, nmax).astype(np.uint8)


def _q_affine(x: np.ndarray, nmax: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Q4_1/Q5_1 reference: d = (max-min)/nmax, q = min(nmax, trunc((x-min)/d + 0.5))."""
    lo = x.min(axis=1, keepdims=True)
    d = (x.max(axis=1, keepdims=True) - lo) / F32(nmax)
    q = np.trunc((x - lo) * _safe_inv(d) + F32(0.5))
    return d, lo, np.clip(q, 0, nmax).astype(np.uint8)


def _qh_bytes(q: np.ndarray) -> np.ndarray:
    """The 5th bits of (n, 32) values as the little-endian u32 ``qh`` field, (n, 4)."""
    return np.packbits((q >> np.uint8(4)) & np.uint8(1), axis=1, bitorder="little")


def _quant_q4_0(x: np.ndarray) -> np.ndarray:
    d, q = _q_sym(x, 15, 8)
    return np.concatenate([_f16_bytes(d), _pack_nibbles(q)], axis=1)


def _quant_q5_0(x: np.ndarray) -> np.ndarray:
    d, q = _q_sym(x, 31, 16)
    return np.concatenate([_f16_bytes(d), _qh_bytes(q), _pack_nibbles(q & np.uint8(15))], axis=1)


def _quant_q4_1(x: np.ndarray) -> np.ndarray:
    d, lo, q = _q_affine(x, 15)
    return np.concatenate([_f16_bytes(d), _f16_bytes(lo), _pack_nibbles(q)], axis=1)


def _quant_q5_1(x: np.ndarray) -> np.ndarray:
    d, lo, q = _q_affine(x, 31)
    parts = [_f16_bytes(d), _f16_bytes(lo), _qh_bytes(q), _pack_nibbles(q & np.uint8(15))]
    return np.concatenate(parts, axis=1)


def q8_blocks(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of 32 f32 values -> (d (n, 1) f32, q (n, 32) int8), q8_0's rounding (ggml quantize_row_q8_0_ref);
    the stored scale is d rounded to f16."""
    d = np.abs(x).max(axis=1, keepdims=True) / F32(127)
    q = _roundf(x * _safe_inv(d))
    return d, np.clip(q, -127, 127).astype(np.int8)


def _quant_q8_0(x: np.ndarray) -> np.ndarray:
    d, q = q8_blocks(x)
    return np.concatenate([_f16_bytes(d), q.view(np.uint8)], axis=1)


def _quant_q8_1(x: np.ndarray) -> np.ndarray:
    d, q = q8_blocks(x)
    s = d * q.sum(axis=1, keepdims=True, dtype=np.int32).astype(F32)
    return np.concatenate([_f16_bytes(d), _f16_bytes(s), q.view(np.uint8)], axis=1)


def _nearest_index(v: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Index of the nearest of the sorted ``levels`` for each value of ``v`` (ties: lower)."""
    mids = (levels[1:] + levels[:-1]) / 2
    return np.searchsorted(mids, v, side="left")


def _quant_iq4_nl(x: np.ndarray) -> np.ndarray:
    kv = KVALUES_IQ4NL.astype(F32)
    d = _signed_absmax(x) / F32(-127)
    q = _nearest_index(x * _safe_inv(d), kv)
    v = kv[q]
    num = (v * x).sum(axis=1, keepdims=True)
    den = (v * v).sum(axis=1, keepdims=True)
    d = np.where(den > 0, num / np.maximum(den, F32(1)), d).astype(F32)
    dq = _f16_bytes(d).view(F16LE).astype(F32)
    q = _nearest_index(x * _safe_inv(dq), kv).astype(np.uint8)
    return np.concatenate([_f16_bytes(d), _pack_nibbles(q)], axis=1)


def _quant_mxfp4(x: np.ndarray) -> np.ndarray:
    amax = np.abs(x).max(axis=1, keepdims=True)
    with np.errstate(divide="ignore"):
        e = np.where(amax > 0, np.floor(np.log2(amax)) - 2 + 127, 0)
    e = np.clip(e, 0, 254).astype(np.uint8)
    mags = KVALUES_FP4[:8].astype(F32)
    m = _nearest_index(np.abs(x) / e8m0_half(e), mags).astype(np.uint8)
    q = m | np.where((x < 0) & (m > 0), np.uint8(8), np.uint8(0))
    return np.concatenate([e, _pack_nibbles(q)], axis=1)


def f32_to_bf16_bits(x: np.ndarray) -> np.ndarray:
    """f32 -> bf16 bit patterns (uint16): round to nearest even; NaN becomes a quiet NaN."""
    u = np.ascontiguousarray(x, dtype=F32).view(np.uint32)
    rounded = (u + (np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1)))) >> np.uint32(16)
    quiet = (u >> np.uint32(16)) | np.uint32(64)
    return np.where((u & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000), quiet, rounded).astype(np.uint16)


_QUANT: dict[GGMLType, Callable[[np.ndarray], np.ndarray]] = {
    GGMLType.Q4_0: _quant_q4_0,
    GGMLType.Q4_1: _quant_q4_1,
    GGMLType.Q5_0: _quant_q5_0,
    GGMLType.Q5_1: _quant_q5_1,
    GGMLType.Q8_0: _quant_q8_0,
    GGMLType.Q8_1: _quant_q8_1,
    GGMLType.IQ4_NL: _quant_iq4_nl,
    GGMLType.MXFP4: _quant_mxfp4,
    **_k.QUANT_FUNCS,
}

_QUANT_FLOAT: dict[GGMLType, Callable[[np.ndarray], np.ndarray]] = {
    GGMLType.F32: lambda x: x.astype("<f4"),
    GGMLType.F16: lambda x: x.astype("<f2"),
    GGMLType.BF16: lambda x: f32_to_bf16_bits(x).astype("<u2"),
}


def quantizable_types() -> list[GGMLType]:
    """Every ggml type ``quantize`` can write."""
    return sorted([*_QUANT_FLOAT, *_QUANT])


def quantize(x: np.ndarray, ggml_type: "int | str | GGMLType") -> np.ndarray:
    """Encode float values as ggml blocks; returns the raw bytes as a 1-D uint8 array.

    ``x`` (any shape, converted to float32) is read in C order; its size must be a multiple of
    the block size. Raises QuantError for an unsupported type or a partial block.
    """
    t = _resolve(ggml_type)
    x = np.asarray(x, dtype=F32).reshape(-1)
    if t in _QUANT_FLOAT:
        with np.errstate(over="ignore"):
            return _QUANT_FLOAT[t](x).view(np.uint8).reshape(-1)
    if t not in _QUANT:
        raise QuantError(f"quantize: ggml type {t.name} ({int(t)}) is not supported")
    blk, nbytes = BLOCK_LAYOUT[t]
    if x.size % blk:
        raise QuantError(f"{t.name}: {x.size} values is not a multiple of the block size {blk}")
    out = np.empty((x.size // blk, nbytes), np.uint8)
    xb = x.reshape(-1, blk)
    step = max(1, (CHUNK_WEIGHTS // 4) // blk)
    for s in range(0, xb.shape[0], step):
        with np.errstate(over="ignore", invalid="ignore"):
            out[s:s + step] = _QUANT[t](xb[s:s + step])
    return out.reshape(-1)


# ----------------------------------------------------------------------------- random blocks

# Byte offsets of the f16 scale field and of the f16 min field (or None) in each block, and the
# mean code that the min cancels (so random blocks decode to values centred near zero).
_SCALE_FIELDS: dict[GGMLType, tuple[int, "int | None", float]] = {
    GGMLType.Q4_0: (0, None, 0.0),
    GGMLType.Q4_1: (0, 2, -7.5),
    GGMLType.Q5_0: (0, None, 0.0),
    GGMLType.Q5_1: (0, 2, -15.5),
    GGMLType.Q8_0: (0, None, 0.0),
    GGMLType.Q8_1: (0, None, 0.0),
    GGMLType.IQ4_NL: (0, None, 0.0),
    GGMLType.Q2_K: (80, 82, 1.5),
    GGMLType.Q3_K: (108, None, 0.0),
    GGMLType.Q4_K: (0, 2, 7.5),
    GGMLType.Q5_K: (0, 2, 15.5),
    GGMLType.Q6_K: (208, None, 0.0),
    GGMLType.IQ4_XS: (0, None, 0.0),
}

# (uint view, sign+mantissa mask, exponent shift, exponent bias, max biased exponent)
_FLOAT_BITS = {
    GGMLType.F32: (np.uint32, 0x807FFFFF, 23, 127, 254),
    GGMLType.F16: (np.uint16, 0x83FF, 10, 15, 30),
    GGMLType.BF16: (np.uint16, 0x807F, 7, 127, 254),
    GGMLType.F64: (np.uint64, 0x800FFFFFFFFFFFFF, 52, 1023, 2046),
}


RANDOM_CHUNK_BYTES = 1 << 20  # random data is made and fixed up chunk by chunk, while in cache


def _fill_random(dst: np.ndarray, rng: np.random.Generator) -> None:
    """Fill the uint8 array ``dst`` with bytes of the generator's raw 64-bit stream."""
    words = rng.bit_generator.random_raw((dst.size + 7) // 8)
    dst.reshape(-1)[...] = np.asarray(words, dtype=np.uint64).view(np.uint8)[: dst.size]


def _random_floats(buf: np.ndarray, t: GGMLType, scale: float) -> None:
    """Random bits -> finite floats +-[1, 2) * 2**k with RMS about ``scale`` (in place)."""
    utype, mask, shift, bias, emax = _FLOAT_BITS[t]
    k = int(np.round(np.log2(scale / np.sqrt(7.0 / 3.0))))
    exp = min(max(bias + k, 1), emax)
    u = buf.view(utype)
    np.bitwise_and(u, utype(mask), out=u)
    np.bitwise_or(u, utype(exp) << utype(shift), out=u)


def _f16_const(v: float) -> np.uint16:
    """The bits of a finite f16 close to ``v`` (clamped to the f16 range, never rounded to 0)."""
    v = float(np.clip(v, -65504.0, 65504.0))
    h = np.array([v], F16LE)
    if v != 0 and h[0] == 0:
        h = np.array([np.copysign(2.0**-24, v)], F16LE)
    return np.uint16(h.view("<u2")[0])


def _set_u16(blocks: np.ndarray, off: int, bits: np.uint16) -> None:
    """Store the little-endian u16 ``bits`` at byte ``off`` of every block (one strided pass)."""
    blocks[:, off:off + 2].view("<u2")[:, 0] = bits


def _write_scales(blocks: np.ndarray, t: GGMLType, d: float) -> None:
    """Set every block's scale field(s) of ``t`` for a super-scale ``d`` (MXFP4: ``d`` = 2**(e-128))."""
    if t == GGMLType.MXFP4:
        blocks[:, 0] = np.uint8(np.clip(128 + np.round(np.log2(d)), 1, 254))
    elif t == GGMLType.Q8_K:
        blocks[:, 0:4].view("<f4")[:, 0] = F32(d)
    else:
        doff, moff, ratio = _SCALE_FIELDS[t]
        hd = _f16_const(d)
        _set_u16(blocks, doff, hd)
        if moff is not None:
            _set_u16(blocks, moff, _f16_const(ratio * float(np.array([hd]).view(F16LE)[0])))


def _fix_sums(blocks: np.ndarray, t: GGMLType) -> None:
    """Fill the redundant sum fields of Q8_1 (s = d * sum q) and Q8_K (bsums) consistently."""
    if t == GGMLType.Q8_1:
        sums = blocks[:, 4:36].view(np.int8).sum(axis=1, dtype=np.int32).astype(F32)
        s = blocks[:, 0:2].view(F16LE).astype(F32)[:, 0] * sums
        blocks[:, 2:4].view(F16LE)[:, 0] = s
    elif t == GGMLType.Q8_K:
        q = blocks[:, 4:260].view(np.int8).reshape(-1, 16, 16)
        blocks[:, 260:292].view("<i2")[...] = q.sum(axis=2, dtype=np.int32)


def _calibrate(sample: np.ndarray, t: GGMLType, scale: float) -> float:
    """The super-scale that gives decoded values of std ``scale``, measured on ``sample`` blocks."""
    _write_scales(sample, t, 1.0)
    std = float(dequantize(sample, t, sample.shape[0] * BLOCK_LAYOUT[t][0]).std())
    return scale / std if std > 0 else 1.0


def random_blocks(
    ggml_type: "int | str | GGMLType",
    n_elements: int,
    rng: np.random.Generator,
    scale: float = 0.02,
    out: "np.ndarray | None" = None,
) -> np.ndarray:
    """Random but valid raw data of ``n_elements`` values of ``ggml_type`` (1-D uint8).

    Code bytes are random; scale fields are finite and set so that the decoded values have a
    standard deviation of roughly ``scale`` (never NaN or Inf). Float types get random finite
    values of about that size; integer types are raw random bytes. ``out``: an optional
    writable, contiguous uint8 array of exactly the needed size (e.g. a slice of an mmap'd file).
    """
    t = _resolve(ggml_type)
    if t not in _ELEMENTWISE and t not in _BLOCKWISE:
        raise QuantError(f"random_blocks: ggml type {t.name} ({int(t)}) is not supported")
    if not (np.isfinite(scale) and scale > 0):
        raise QuantError(f"random_blocks: scale must be a positive finite number, got {scale}")
    blk, nbytes = BLOCK_LAYOUT[t]
    if n_elements < 0 or n_elements % blk:
        raise QuantError(f"{t.name}: {n_elements} elements is not a multiple of the block size {blk}")
    n_blocks = n_elements // blk
    if out is None:
        out = np.empty(n_blocks * nbytes, np.uint8)
    elif out.dtype != np.uint8 or out.size != n_blocks * nbytes or not out.flags.c_contiguous:
        raise QuantError(f"random_blocks: out must be contiguous uint8 of {n_blocks * nbytes} bytes")
    blocks = out.reshape(n_blocks, nbytes)
    step = max(1, RANDOM_CHUNK_BYTES // nbytes)
    d = 1.0
    for s in range(0, n_blocks, step):
        chunk = blocks[s:s + step]
        _fill_random(chunk, rng)
        if t in _FLOAT_BITS:
            _random_floats(chunk.reshape(-1), t, scale)
        if t in _BLOCKWISE:
            if s == 0:
                d = _calibrate(chunk[:64], t, scale)
            _write_scales(chunk, t, d)
            _fix_sums(chunk, t)
    return out.reshape(-1)
