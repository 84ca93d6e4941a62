"""zinc.gguf.quants: bit-exact decoders (against gguf-py), quantizer round trips, random blocks.

Every test draws a fresh seed and puts it in its failure messages so a failure can be replayed.
"""

from __future__ import annotations

import ctypes
import itertools
from pathlib import Path

import numpy as np
import pytest

from zinc.errors import QuantError
from zinc.gguf import quants
from zinc.gguf.constants import BLOCK_LAYOUT, GGMLType
from zinc.gguf.quants import (
    block_layout,
    dequantize,
    dequantize_rows,
    quantizable_types,
    quantize,
    random_blocks,
    supported_types,
)

T = GGMLType

# types gguf-py 0.19.0 decodes, and where their f16 fields sit (d first, then min when present)
GGUF_TYPES = {
    T.F32: (), T.F16: (), T.BF16: (),
    T.Q4_0: (0,), T.Q4_1: (0, 2), T.Q5_0: (0,), T.Q5_1: (0, 2), T.Q8_0: (0,),
    T.Q2_K: (80, 82), T.Q3_K: (108,), T.Q4_K: (0, 2), T.Q5_K: (0, 2), T.Q6_K: (208,),
    T.IQ4_NL: (0,), T.IQ4_XS: (0,), T.MXFP4: (),
}
EXTREME_F16 = np.array(
    [0x7BFF, 0xFBFF, 0x0400, 0x8400, 0x0001, 0x03FF, 0x8001, 0x0000, 0x8000, 0x3C00, 0xBC00, 0x5BFF],
    np.uint16,
)  # +-max, +-min normal, subnormals, +-0, +-1, 255.9


def new_seed() -> int:
    return int(np.random.SeedSequence().entropy % (1 << 63))


@pytest.fixture
def seed() -> int:
    return new_seed()


def gguf_dequant(raw: np.ndarray, t: GGMLType) -> np.ndarray:
    gguf = pytest.importorskip("gguf")
    nbytes = BLOCK_LAYOUT[t][1]
    qt = gguf.GGMLQuantizationType(int(t))
    with np.errstate(over="ignore", invalid="ignore"):
        out = gguf.quants.dequantize(raw.reshape(-1, nbytes), qt)
    return np.asarray(out, np.float32).reshape(-1)


def assert_bits_equal(ours: np.ndarray, theirs: np.ndarray, msg: str) -> None:
    assert ours.dtype == np.float32 and ours.shape == theirs.shape, msg
    bad = np.flatnonzero(ours.view(np.uint32) != theirs.view(np.uint32))
    assert bad.size == 0, f"{msg}: {bad.size} mismatches, first at {bad[0]}: {ours[bad[0]]!r} vs {theirs[bad[0]]!r}"


def finite_f16_bits(rng: np.random.Generator, n: int) -> np.ndarray:
    """Random finite f16 bit patterns (all signs, normals and subnormals)."""
    h = rng.integers(0, 1 << 16, n, dtype=np.uint16)
    inf_nan = (h & 0x7C00) == 0x7C00
    h[inf_nan] &= np.uint16(0xBFFF)  # clear one exponent bit
    return h


def random_raw(t: GGMLType, n_blocks: int, rng: np.random.Generator) -> np.ndarray:
    """Fully random bytes with every f16 field replaced by a finite f16; floats finite too."""
    nbytes = BLOCK_LAYOUT[t][1]
    raw = rng.integers(0, 256, n_blocks * nbytes, dtype=np.uint8)
    if t == T.F32:
        raw = rng.standard_normal(n_blocks).astype(np.float32) * np.float32(rng.uniform(1e-3, 1e3))
        return raw.view(np.uint8)
    if t in (T.F16, T.BF16):
        u = raw.view(np.uint16)
        if t == T.F16:
            u[:] = finite_f16_bits(rng, u.size)
        else:
            u[(u & 0x7F80) == 0x7F80] &= np.uint16(0xBFFF)
        return raw
    blocks = raw.reshape(n_blocks, nbytes)
    for off in GGUF_TYPES[t]:
        blocks[:, off:off + 2] = finite_f16_bits(rng, n_blocks).view(np.uint8).reshape(-1, 2)
    return raw


# ----------------------------------------------------------------------------- decoders vs gguf-py


@pytest.mark.parametrize("n_blocks", [1, 3, 37, 1000])
@pytest.mark.parametrize("t", list(GGUF_TYPES), ids=lambda t: t.name)
def test_dequantize_matches_gguf_bit_exact(t: GGMLType, n_blocks: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    raw = random_raw(t, n_blocks, rng)
    n = n_blocks * BLOCK_LAYOUT[t][0]
    assert_bits_equal(dequantize(raw, t, n), gguf_dequant(raw, t), f"{t.name} seed={seed}")


def extreme_blocks(t: GGMLType, rng: np.random.Generator) -> np.ndarray:
    """One block per combination of extreme scale field values, with random codes."""
    nbytes = BLOCK_LAYOUT[t][1]
    if t == T.MXFP4:
        blocks = rng.integers(0, 256, (256, nbytes), dtype=np.uint8)
        blocks[:, 0] = np.arange(256)
        return blocks
    fields = GGUF_TYPES[t]
    combos = np.array(list(itertools.product(EXTREME_F16, repeat=len(fields))), np.uint16)
    blocks = rng.integers(0, 256, (len(combos), nbytes), dtype=np.uint8)
    for i, off in enumerate(fields):
        blocks[:, off:off + 2] = combos[:, i].copy().view(np.uint8).reshape(-1, 2)
    if t == T.Q6_K:  # extreme int8 sub-block scales too
        blocks[:, 192:208] = np.array([-128, 127, -1, 0, 1, 64, -64, 127] * 2, np.int8).view(np.uint8)
    if t in (T.Q4_K, T.Q5_K):
        blocks[::2, 4:16] = 0xFF  # all six-bit scales and mins at 63
    return blocks


@pytest.mark.parametrize("t", [t for t in GGUF_TYPES if GGUF_TYPES[t] or t == T.MXFP4], ids=lambda t: t.name)
def test_dequantize_extreme_scales_bit_exact(t: GGMLType, seed: int) -> None:
    rng = np.random.default_rng(seed)
    blocks = extreme_blocks(t, rng)
    n = blocks.shape[0] * BLOCK_LAYOUT[t][0]
    assert_bits_equal(dequantize(blocks, t, n), gguf_dequant(blocks, t), f"{t.name} seed={seed}")


def test_dequantize_float_extremes() -> None:
    specials = np.array([0x7F7FFFFF, 0x00000001, 0x80800000, 0x7F800000, 0xFF800000, 0, 0x80000000], np.uint32)
    assert_bits_equal(dequantize(specials.view(np.uint8), "F32", 7), specials.view(np.float32), "F32")
    h = np.arange(1 << 16, dtype=np.uint16)
    h = h[(h & 0x7C00) != 0x7C00]
    assert_bits_equal(dequantize(h.view(np.uint8), T.F16, h.size), gguf_dequant(h.view(np.uint8), T.F16), "F16")
    b = np.arange(1 << 16, dtype=np.uint16)
    assert_bits_equal(dequantize(b, T.BF16, b.size), (b.astype(np.uint32) << 16).view(np.float32), "BF16")


@pytest.mark.parametrize("t", [T.Q4_K, T.Q6_K, T.Q5_0, T.MXFP4, T.Q8_K, T.Q8_1, T.BF16], ids=lambda t: t.name)
def test_chunk_boundaries(t: GGMLType, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Decoding, encoding and random generation give the same bytes/values with tiny chunks."""
    blk, nbytes = BLOCK_LAYOUT[t]
    n = 37 * blk
    raw = random_blocks(t, n, np.random.default_rng(seed))
    x = dequantize(raw, t, n)
    enc = quantize(x, t) if t in quantizable_types() else None
    monkeypatch.setattr(quants, "CHUNK_WEIGHTS", 5 * max(blk, 32) + 1)
    monkeypatch.setattr(quants, "RANDOM_CHUNK_BYTES", 3 * nbytes + 7)
    assert_bits_equal(dequantize(raw, t, n), x, f"{t.name} seed={seed}")
    if enc is not None:
        assert np.array_equal(quantize(x, t), enc), f"{t.name} seed={seed}"
    raw2 = random_blocks(t, n, np.random.default_rng(seed))
    y = dequantize(raw2, t, n)
    assert np.isfinite(y).all() and 0.01 < y.std() < 0.04, f"{t.name} seed={seed}: {y.std()}"
    if t in GGUF_TYPES:
        assert_bits_equal(y, gguf_dequant(raw2, t), f"{t.name} seed={seed}")


# ----------------------------------------------------------------------------- types gguf-py lacks


def test_dequantize_types_without_gguf_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_blocks = 5
    raw = random_raw(T.Q8_0, n_blocks, rng)  # reuse for the layout of Q8_1: d, s, then 32 int8
    q81 = np.zeros((n_blocks, 36), np.uint8)
    q81[:, 0:2] = raw.reshape(n_blocks, 34)[:, 0:2]
    q81[:, 4:36] = rng.integers(0, 256, (n_blocks, 32), dtype=np.uint8)
    d = q81[:, 0:2].copy().view("<f2").astype(np.float32)
    want = q81[:, 4:].view(np.int8).astype(np.float32) * d
    assert_bits_equal(dequantize(q81, T.Q8_1, n_blocks * 32), want.reshape(-1), f"Q8_1 seed={seed}")

    q8k = rng.integers(0, 256, (n_blocks, 292), dtype=np.uint8)
    dk = rng.uniform(-2, 2, (n_blocks, 1)).astype("<f4")
    q8k[:, 0:4] = dk.view(np.uint8)
    want = q8k[:, 4:260].view(np.int8).astype(np.float32) * dk
    assert_bits_equal(dequantize(q8k, "q8_k", n_blocks * 256), want.reshape(-1), f"Q8_K seed={seed}")

    for t, dt in [(T.I8, "i1"), (T.I16, "<i2"), (T.I32, "<i4"), (T.I64, "<i8"), (T.F64, "<f8")]:
        vals = (rng.standard_normal(11) * 100).astype(dt)
        assert_bits_equal(dequantize(vals.tobytes(), t, 11), vals.astype(np.float32), f"{t.name} seed={seed}")


# ----------------------------------------------------------------------------- API and errors


def test_input_forms_and_trailing_bytes(seed: int) -> None:
    rng = np.random.default_rng(seed)
    raw = random_raw(T.Q4_K, 3, rng)
    want = dequantize(raw, T.Q4_K, 768)
    b = raw.tobytes()
    for form in (b, bytearray(b), memoryview(b), raw.reshape(3, 144), raw.reshape(3, 12, 12)):
        for t in (T.Q4_K, 12, "Q4_K", "q4_k"):
            assert_bits_equal(dequantize(form, t, 768), want, f"{type(form).__name__} {t!r} seed={seed}")
    # extra bytes after the needed prefix are ignored; fewer elements read a prefix
    assert_bits_equal(dequantize(b + b"\xff" * 100, T.Q4_K, 768), want, f"trailing seed={seed}")
    assert_bits_equal(dequantize(raw, T.Q4_K, 256), want[:256], f"prefix seed={seed}")
    out = dequantize(b, T.Q4_K, 768)
    out[0] = 1.0  # a fresh, writable array even from immutable bytes
    f32 = dequantize(np.frombuffer(want.tobytes(), np.uint8), T.F32, 768)
    assert f32.flags.writeable and not np.shares_memory(f32, want)
    assert dequantize(b"", T.Q6_K, 0).shape == (0,)
    rows = dequantize_rows(raw, "Q4_K", (3, 256))
    assert rows.shape == (3, 256) and np.array_equal(rows.reshape(-1).view(np.uint32), want.view(np.uint32))


def test_block_layout_and_type_lists() -> None:
    assert block_layout("q4_k") == (256, 144)
    assert block_layout(39) == (32, 17)
    assert block_layout(T.Q6_K) == (256, 210)
    for t in GGUF_TYPES:
        assert t in supported_types()
    for t in (T.Q8_0, T.Q4_0, T.Q4_K, T.Q6_K, T.MXFP4, T.F32, T.F16, T.BF16, T.Q5_0):
        assert t in quantizable_types()


@pytest.mark.parametrize(
    "args, pattern",
    [
        ((b"\0" * 144, "Q9_K", 256), "Q9_K"),
        ((b"\0" * 144, 99, 256), "99"),
        ((b"\0" * 66, "IQ2_XXS", 256), "IQ2_XXS"),
        ((b"\0" * 144, T.Q4_K, 100), "multiple of the block size 256"),
        ((b"\0" * 144, T.Q4_K, -256), "multiple"),
        ((b"\0" * 143, T.Q4_K, 256), "need 144 bytes, got 143"),
        ((np.zeros(10, np.uint8), T.Q8_0, 64), "need 68 bytes, got 10"),
        (([1, 2, 3], T.F32, 0), "bytes-like"),
    ],
)
def test_dequantize_errors(args: tuple, pattern: str) -> None:
    with pytest.raises(QuantError, match=pattern):
        dequantize(*args)


def test_quantize_and_random_errors(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(100).astype(np.float32)
    with pytest.raises(QuantError, match="multiple of the block size 32"):
        quantize(x, T.Q8_0)
    with pytest.raises(QuantError, match="IQ2_XS"):
        quantize(rng.standard_normal(256), "IQ2_XS")
    with pytest.raises(QuantError, match="NVFP4"):
        random_blocks("NVFP4", 64, rng)
    with pytest.raises(QuantError, match="multiple"):
        random_blocks(T.Q4_K, 100, rng)
    with pytest.raises(QuantError, match="scale"):
        random_blocks(T.Q4_K, 256, rng, scale=0.0)


# ----------------------------------------------------------------------------- quantizers

# (type, bound on RMS error / RMS of the data for Gaussian input)
QUANT_BOUNDS = {
    T.F32: 0.0, T.F16: 1e-3, T.BF16: 5e-3, T.Q8_0: 0.01, T.Q8_1: 0.01,
    T.Q5_0: 0.05, T.Q5_1: 0.05, T.Q4_0: 0.10, T.Q4_1: 0.10, T.IQ4_NL: 0.10,
    T.Q4_K: 0.085, T.Q5_K: 0.045, T.Q6_K: 0.025, T.MXFP4: 0.14,
}


@pytest.mark.parametrize("t", list(QUANT_BOUNDS), ids=lambda t: t.name)
def test_quantize_round_trip(t: GGMLType, seed: int) -> None:
    rng = np.random.default_rng(seed)
    blk, nbytes = BLOCK_LAYOUT[t]
    n_rows, row = 3, 2048
    sigma = rng.uniform(1e-3, 10.0, (n_rows, 1)).astype(np.float32)  # rows of different sizes
    x = (rng.standard_normal((n_rows, row)).astype(np.float32) * sigma)
    raw = quantize(x, t)
    assert raw.dtype == np.uint8 and raw.shape == (x.size // blk * nbytes,)
    y = dequantize(raw, t, x.size).reshape(n_rows, row)
    rel = np.sqrt(np.mean((y - x) ** 2, axis=1) / np.mean(x**2, axis=1))
    assert np.all(rel <= QUANT_BOUNDS[t]), f"{t.name} seed={seed} rel RMS {rel}"
    if t in GGUF_TYPES:
        assert_bits_equal(y.reshape(-1), gguf_dequant(raw, t), f"{t.name} seed={seed}")


@pytest.mark.parametrize("t", [T.Q8_0, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.BF16, T.F16, T.MXFP4], ids=lambda t: t.name)
def test_quantize_equals_gguf_reference_quantizer(t: GGMLType, seed: int) -> None:
    gguf = pytest.importorskip("gguf")
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((4, 512)).astype(np.float32) * np.float32(rng.uniform(0.01, 3))
    theirs = np.asarray(gguf.quants.quantize(x, gguf.GGMLQuantizationType(int(t)))).view(np.uint8).reshape(-1)
    assert np.array_equal(quantize(x, t), theirs), f"{t.name} seed={seed}"


@pytest.mark.parametrize("t", [t for t in QUANT_BOUNDS if BLOCK_LAYOUT[t][0] > 1], ids=lambda t: t.name)
def test_quantize_zero_constant_and_outlier_blocks(t: GGMLType, seed: int) -> None:
    rng = np.random.default_rng(seed)
    blk = BLOCK_LAYOUT[t][0]
    x = rng.standard_normal((4, blk)).astype(np.float32)
    x[0] = 0.0
    x[1] = np.float32(0.75)
    x[2, 5] = 1000.0
    x[3] = np.abs(x[3]) + 3  # all positive, far from zero
    y = dequantize(quantize(x, t), t, x.size).reshape(4, blk)
    assert np.isfinite(y).all(), f"{t.name} seed={seed}"
    assert np.all(y[0] == 0), f"{t.name} seed={seed}: zero block decodes to {y[0][:4]}"
    tol = max(0.1, 2 * QUANT_BOUNDS[t])  # MXFP4's reference exponent may clip the largest value
    assert abs(y[2, 5] - 1000.0) < 1000.0 * tol, f"{t.name} seed={seed}: outlier {y[2, 5]}"
    assert np.allclose(y[1], 0.75, rtol=0.2, atol=0.05), f"{t.name} seed={seed}: constant {y[1][:4]}"


def test_bf16_rounding_and_nan() -> None:
    x = np.array([1.0, 1.0 + 2**-8, 1.0 + 3 * 2**-8, 1.0 + 2**-8 + 2**-20, np.inf, -np.nan, 3.4e38], np.float32)
    got = quantize(x, T.BF16).view("<u2")
    want = [0x3F80, 0x3F80, 0x3F82, 0x3F81, 0x7F80]
    assert got[:5].tolist() == want
    assert (got[5] & 0x7F80) == 0x7F80 and (got[5] & 0x7F) != 0  # still NaN
    assert got[6] == 0x7F80  # rounds up past the largest bf16 to inf, like ggml


# ----------------------------------------------------------------------------- random blocks


@pytest.mark.parametrize("t", supported_types(), ids=lambda t: t.name)
def test_random_blocks_valid(t: GGMLType, seed: int) -> None:
    rng = np.random.default_rng(seed)
    blk, nbytes = BLOCK_LAYOUT[t]
    n = blk * 67
    raw = random_blocks(t, n, rng, scale=0.02)
    assert raw.dtype == np.uint8 and raw.shape == (67 * nbytes,), f"{t.name} seed={seed}"
    y = dequantize(raw, t, n)
    assert np.isfinite(y).all(), f"{t.name} seed={seed}"
    if t in (T.I8, T.I16, T.I32, T.I64):
        return
    assert 0.01 < y.std() < 0.04, f"{t.name} seed={seed}: std {y.std()}"
    if t in GGUF_TYPES:
        assert_bits_equal(y, gguf_dequant(raw, t), f"{t.name} seed={seed}")


@pytest.mark.parametrize("scale", [1e-3, 1.0])
@pytest.mark.parametrize("t", [T.Q4_K, T.Q6_K, T.MXFP4, T.Q8_0, T.F16, T.BF16], ids=lambda t: t.name)
def test_random_blocks_scale(t: GGMLType, scale: float, seed: int) -> None:
    y = dequantize(random_blocks(t, 256 * 64, np.random.default_rng(seed), scale=scale), t, 256 * 64)
    assert np.isfinite(y).all() and scale / 2 < y.std() < scale * 2, f"{t.name} seed={seed}: {y.std()}"


def test_random_blocks_deterministic_and_sums(seed: int) -> None:
    a = random_blocks(T.Q4_K, 2560, np.random.default_rng(seed))
    b = random_blocks(T.Q4_K, 2560, np.random.default_rng(seed))
    assert np.array_equal(a, b), f"seed={seed}"
    q8k = random_blocks(T.Q8_K, 512, np.random.default_rng(seed)).reshape(2, 292)
    sums = q8k[:, 4:260].view(np.int8).reshape(2, 16, 16).sum(axis=2)
    assert np.array_equal(q8k[:, 260:].copy().view("<i2"), sums), f"seed={seed}"
    q81 = random_blocks(T.Q8_1, 64, np.random.default_rng(seed)).reshape(2, 36)
    d = q81[:, 0:2].copy().view("<f2").astype(np.float32)[:, 0]
    s = q81[:, 2:4].copy().view("<f2").astype(np.float32)[:, 0]
    want = d * q81[:, 4:].view(np.int8).sum(axis=1)
    assert np.allclose(s, want, rtol=2e-3, atol=1e-6), f"seed={seed}"


# ----------------------------------------------------------------------------- ggml's C code (oracle)

C_NAMES = {
    T.Q4_0: "q4_0", T.Q4_1: "q4_1", T.Q5_0: "q5_0", T.Q5_1: "q5_1", T.Q8_0: "q8_0", T.Q8_1: "q8_1",
    T.Q2_K: "q2_K", T.Q3_K: "q3_K", T.Q4_K: "q4_K", T.Q5_K: "q5_K", T.Q6_K: "q6_K", T.Q8_K: "q8_K",
    T.IQ4_NL: "iq4_nl", T.IQ4_XS: "iq4_xs", T.MXFP4: "mxfp4",
}


@pytest.fixture(scope="module")
def ggml() -> ctypes.CDLL:
    """libggml-base from llama-cpp-python: its dequantize_row_* / quantize_row_*_ref functions."""
    llama_cpp = pytest.importorskip("llama_cpp")
    return ctypes.CDLL(str(Path(llama_cpp.__file__).parent / "lib" / "libggml-base.so"))


def c_row_fn(lib: ctypes.CDLL, name: str):
    fn = getattr(lib, name)
    fn.restype = None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    return fn


def c_dequant(lib: ctypes.CDLL, t: GGMLType, raw: np.ndarray, n: int) -> np.ndarray:
    name = {T.F16: "ggml_fp16_to_fp32_row", T.BF16: "ggml_bf16_to_fp32_row"}.get(t)
    raw = np.ascontiguousarray(raw)
    out = np.empty(n, np.float32)
    c_row_fn(lib, name or f"dequantize_row_{C_NAMES[t]}")(raw.ctypes.data, out.ctypes.data, n)
    return out


def c_quant(lib: ctypes.CDLL, t: GGMLType, x: np.ndarray) -> np.ndarray:
    blk, nbytes = BLOCK_LAYOUT[t]
    x = np.ascontiguousarray(x, np.float32).reshape(-1)
    out = np.empty(x.size // blk * nbytes, np.uint8)
    c_row_fn(lib, f"quantize_row_{C_NAMES[t]}_ref")(x.ctypes.data, out.ctypes.data, x.size)
    return out


@pytest.mark.oracle
@pytest.mark.parametrize("t", [t for t in C_NAMES if t != T.Q8_1] + [T.F16, T.BF16], ids=lambda t: t.name)
def test_dequantize_matches_ggml_c(ggml: ctypes.CDLL, t: GGMLType, seed: int) -> None:
    rng = np.random.default_rng(seed)
    blk = BLOCK_LAYOUT[t][0]
    cases = [random_blocks(t, 300 * blk, rng)]
    if t in GGUF_TYPES and t not in (T.F16, T.BF16):
        cases += [random_raw(t, 41, rng), extreme_blocks(t, rng).reshape(-1)]
    elif t in (T.F16, T.BF16):
        cases += [random_raw(t, 4096, rng)]
    for raw in cases:
        n = raw.size // BLOCK_LAYOUT[t][1] * blk
        with np.errstate(over="ignore", invalid="ignore"):
            want = c_dequant(ggml, t, raw, n)
        assert_bits_equal(dequantize(raw, t, n), want, f"{t.name} seed={seed}")


@pytest.mark.oracle
@pytest.mark.parametrize("t", [T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0, T.Q8_1, T.MXFP4], ids=lambda t: t.name)
def test_quantize_equals_ggml_reference_quantizer(ggml: ctypes.CDLL, t: GGMLType, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((8, 256)).astype(np.float32) * rng.uniform(1e-3, 10, (8, 1)).astype(np.float32)
    x[3, :32] = 0.0
    assert np.array_equal(quantize(x, t), c_quant(ggml, t, x)), f"{t.name} seed={seed}"


@pytest.mark.oracle
@pytest.mark.parametrize("t", [T.Q4_K, T.Q5_K, T.Q6_K, T.IQ4_NL], ids=lambda t: t.name)
def test_quantize_error_close_to_ggml(ggml: ctypes.CDLL, t: GGMLType, seed: int) -> None:
    """Our K-quant search is not ggml's, but it must be about as accurate (and decode in C alike)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((16, 256)).astype(np.float32) * np.float32(rng.uniform(1e-3, 10))
    ours = quantize(x, t)
    y = dequantize(ours, t, x.size)
    assert_bits_equal(y, c_dequant(ggml, t, ours, x.size), f"{t.name} seed={seed}")
    y_ref = dequantize(c_quant(ggml, t, x), t, x.size)
    err, err_ref = (float(np.sqrt(np.mean((v - x.reshape(-1)) ** 2))) for v in (y, y_ref))
    assert err <= 1.05 * err_ref, f"{t.name} seed={seed}: rms error {err} vs ggml {err_ref}"


@pytest.mark.oracle
def test_bf16_equals_ggml(ggml: ctypes.CDLL, seed: int) -> None:
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 1 << 32, 4096, dtype=np.uint32)
    bits[:5] = [0x3F808000, 0x3F818000, 0x7F7FFFFF, 0x7F800001, 0xFFFF0000]  # ties, overflow, NaNs
    x = bits.view(np.float32)
    want = np.empty(x.size, np.uint16)
    c_row_fn(ggml, "ggml_fp32_to_bf16_row_ref")(x.ctypes.data, want.ctypes.data, x.size)
    assert np.array_equal(quantize(x, T.BF16).view("<u2"), want), f"seed={seed}"
