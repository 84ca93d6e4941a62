"""Dequantize-to-tile (prefill GEMM operands, embedding rows, the generic matvec) for every quant type the backend loads.

Weights are repacked at upload from raw GGUF blocks into plain per-field arrays (see
`zinc.backends.cuda.weights`), one row of the (N, K) matrix after another:

* Q4_K: qs u8 (N, K/2) (the 128 nibble bytes of each block), sc u8 / mn u8 (N, K/32) (the six-bit
  scales and mins, unpacked), dm f16 (N, 2*K/256) (d, dmin of each block), sm4 i32 (N, K/64) (see matvec.py);
* Q6_K: ql u8 (N, K/2), qh u8 (N, K/4), sc i8 (N, K/16), d f16 (N, K/256) (and sc4, the scales as
  `kernels.mmvs` reads them);
* Q8_0: qs i8 (N, K), d f16 (N, K/32);
* Q5_K: qs u8 (N, K/2) and dm as Q4_K, qh u8 (N, K/8) (the 32 high-bit bytes of each block),
  scmn u8 (N, K/16) (per block the 8 unpacked scales, then the 8 mins);
* 32-value blocks (Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4): qs u8 (N, K/2) (the 16 nibble bytes of each
  block as in the file: byte j holds values j and j+16), then per block: Q4_0 d f16; Q4_1 d, m f16;
  Q5_0 qh i32 (the fifth bits), d f16; Q5_1 qh, d, m; IQ4_NL d f16 and the 16-entry f32 value table;
  MXFP4 e u8 (the E8M0 exponent) and the f32 table of doubled E2M1 values.

Each kernel walks K one 256-value super-block at a time (Q8_0: eight 32-value blocks) and builds
that super-block's values as a (BN, G, L) tile whose flattened (G, L) index is the value's position
in the super-block, so the matching activations are one contiguous load.
"""

from __future__ import annotations

import triton
import triton.language as tl

QK = 256  # values per super-block (a K-quant block, or 8 Q8_0 blocks)
INTERPRETER_ROWS = 64  # rows a program under Triton's CPU interpreter, where a program costs its op count


def program_rows(bn: int, gpu_rows: int, x) -> int:
    """Rows a program of a row-tiled kernel: bn if given, else gpu_rows on a GPU and INTERPRETER_ROWS on CPU
    tensors (Triton's interpreter: bigger tiles mean fewer, slow, programs)."""
    return bn or (gpu_rows if x.is_cuda else INTERPRETER_ROWS)


@triton.jit
def e8m0_half(e):
    """An MXFP4 block's E8M0 exponent byte e (int32) -> 2**(e - 128) as f32 (ggml_e8m0_to_fp32_half: the doubled
    E2M1 values times this are the block's values; e < 2 gives the subnormal halves)."""
    return tl.where(e < 2, 0x00200000 << e, (e - 1) << 23).to(tl.float32, bitcast=True)


@triton.jit
def _nibbles_k(a, r, kb, K):
    """The 4-bit values of K-quant super-block kb (Q4_K / Q5_K qs layout) of rows r -> (BN, 8, 32) int32."""
    g = tl.arange(0, 8)[None, :, None]
    l = tl.arange(0, 32)[None, None, :]
    q = tl.load(a + r[:, None, None] * (K // 2) + kb * 128 + (g // 2) * 32 + l).to(tl.int32)
    return (q >> ((g % 2) * 4)) & 15


@triton.jit
def _scale_min_k(q, sc, mn, d, r, kb, K):
    """q * d * sc - dmin * mn per 32-value sub-block (sc, mn (BN, 8) f32; d, dmin per super-block in d)."""
    dd = tl.load(d + r * (K // 128) + kb * 2).to(tl.float32)
    dmin = tl.load(d + r * (K // 128) + kb * 2 + 1).to(tl.float32)
    scale = (dd[:, None] * sc)[:, :, None]
    minus = (dmin[:, None] * mn)[:, :, None]
    return q.to(tl.float32) * scale - minus


@triton.jit
def _tile_q4k(a, b, c, d, r, kb, K):
    """Q4_K super-block kb of rows r (BN,) int64 -> (BN, 8, 32) f32."""
    so = r[:, None] * (K // 32) + kb * 8 + tl.arange(0, 8)[None, :]
    return _scale_min_k(_nibbles_k(a, r, kb, K), tl.load(b + so).to(tl.float32), tl.load(c + so).to(tl.float32),
                        d, r, kb, K)


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
def _tile_q5k(a, b, c, d, r, kb, K):
    """Q5_K super-block kb of rows r -> (BN, 8, 32) f32: Q4_K's nibbles plus one high bit per value."""
    g = tl.arange(0, 8)[None, :, None]
    l = tl.arange(0, 32)[None, None, :]
    hb = tl.load(b + r[:, None, None] * (K // 8) + kb * 32 + l).to(tl.int32)
    q = _nibbles_k(a, r, kb, K) | (((hb >> g) & 1) << 4)
    so = r[:, None] * (K // 16) + kb * 16 + tl.arange(0, 8)[None, :]
    return _scale_min_k(q, tl.load(c + so).to(tl.float32), tl.load(c + so + 8).to(tl.float32), d, r, kb, K)


@triton.jit
def _tile_b32(a, b, c, d, r, kb, K, QT: tl.constexpr):
    """Blocks 8*kb .. 8*kb+7 (32 values each) of a 4/5-bit block type -> (BN, 8, 32) f32 (past K: 0)."""
    g = tl.arange(0, 8)[None, :, None]
    l = tl.arange(0, 32)[None, None, :]
    rr = r[:, None, None]
    blk = kb * 8 + g
    ok = blk < K // 32
    q = tl.load(a + rr * (K // 2) + blk * 16 + (l % 16), mask=ok, other=0).to(tl.int32)
    q = (q >> ((l // 16) * 4)) & 15
    bo = (r[:, None] * (K // 32) + kb * 8 + tl.arange(0, 8)[None, :])[:, :, None]
    bok = ok & (rr >= 0)
    if QT == 2:  # Q4_0
        w = (q - 8).to(tl.float32) * tl.load(b + bo, mask=bok, other=0).to(tl.float32)
    elif QT == 3:  # Q4_1
        w = q.to(tl.float32) * tl.load(b + bo, mask=bok, other=0).to(tl.float32)
        w = w + tl.load(c + bo, mask=bok, other=0).to(tl.float32)
    elif QT == 6:  # Q5_0
        q = q | (((tl.load(b + bo, mask=bok, other=0) >> l) & 1) << 4)
        w = (q - 16).to(tl.float32) * tl.load(c + bo, mask=bok, other=0).to(tl.float32)
    elif QT == 7:  # Q5_1
        q = q | (((tl.load(b + bo, mask=bok, other=0) >> l) & 1) << 4)
        w = q.to(tl.float32) * tl.load(c + bo, mask=bok, other=0).to(tl.float32)
        w = w + tl.load(d + bo, mask=bok, other=0).to(tl.float32)
    elif QT == 20:  # IQ4_NL
        w = tl.load(c + q) * tl.load(b + bo, mask=bok, other=0).to(tl.float32)
    else:  # MXFP4: table value times 2**(e - 128) (ggml_e8m0_to_fp32_half)
        w = tl.load(c + q) * e8m0_half(tl.load(b + bo, mask=bok, other=0).to(tl.int32))
    return w


@triton.jit
def _tile(a, b, c, d, r, kb, K, QT: tl.constexpr):
    """Super-block kb (256 values) of rows r (BN,) int64 of a weight of ggml type QT -> (BN, G, L) f32."""
    if QT == 12:
        return _tile_q4k(a, b, c, d, r, kb, K)
    elif QT == 13:
        return _tile_q5k(a, b, c, d, r, kb, K)
    elif QT == 14:
        return _tile_q6k(a, b, c, d, r, kb, K)
    elif QT == 8:
        return _tile_q80(a, b, c, d, r, kb, K)
    else:
        return _tile_b32(a, b, c, d, r, kb, K, QT)


@triton.jit
def _fp4(q):
    """Doubled E2M1 values of 4-bit codes (ggml's kvalues_mxfp4: 0 1 2 3 4 6 8 12, bit 3 the sign), as f32."""
    m = q & 7
    v = tl.where(m < 4, m, (2 + (m & 1)) << ((m >> 1) - 1))
    return tl.where((q & 8) != 0, -v, v).to(tl.float32)


@triton.jit
def _small_f16(q, bias: tl.constexpr):
    """Small non-negative ints q (int32, < 1024) minus bias as f16, from the bits of 1024 + q: no int-to-float
    conversion (a quarter of the ALU rate: the grouped experts GEMM's tiles were bound by it, session 16)."""
    return (q | 0x6400).to(tl.int16).to(tl.float16, bitcast=True) - (1024.0 + bias)


@triton.jit
def _scaled(d, sm, shift: tl.constexpr):
    """d (f32) times byte shift / 8 of words sm, rounded to f16."""
    return (d * ((sm >> shift) & 255).to(tl.float32)).to(tl.float16)


@triton.jit
def _half(w, i):
    """f16 number i (0: the low half) of int32 words w, as f32."""
    return ((w >> (16 * i)) & 0xFFFF).to(tl.int16).to(tl.float16, bitcast=True).to(tl.float32)


_NIBBLES = tl.constexpr("""{
.reg .b32 t0, t1, u, k, s, m;
mov.b32 k, 0x64006400;
mov.b32 s, 0x2C002C00;
mov.b32 m, 0xD400D400;
prmt.b32 t0, $4, 0, 0x7170;
prmt.b32 t1, $4, 0, 0x7372;
and.b32 u, t0, 0x000F000F;
or.b32 u, u, 0x64006400;
sub.f16x2 $0, u, k;
and.b32 u, t1, 0x000F000F;
or.b32 u, u, 0x64006400;
sub.f16x2 $1, u, k;
and.b32 u, t0, 0x00F000F0;
or.b32 u, u, 0x64006400;
fma.rn.f16x2 $2, u, s, m;
and.b32 u, t1, 0x00F000F0;
or.b32 u, u, 0x64006400;
fma.rn.f16x2 $3, u, s, m;
}""")  # four bytes -> their low nibbles (f16 pairs $0, $1) and high ones ($2, $3): each byte to a 16-bit lane, OR'd
# into the bits of 1024 + v (f16 0x6400), minus 1024 (the high nibbles, 1024 + 16 v: times 1/16, minus 64), exact


@triton.jit
def nibbles_f16(q, ASM: tl.constexpr):
    """The low and high nibbles of bytes q (uint8) as f16 (exact): four bytes an instance of `_NIBBLES`, three
    instructions a pair of values, on a GPU (ASM); else through int32 (the interpreter)."""
    if ASM:
        return tl.inline_asm_elementwise(_NIBBLES, "=r,=r,=r,=r,r", [q], dtype=(tl.float16, tl.float16),
                                         is_pure=True, pack=4)
    else:
        return _small_f16(q.to(tl.int32) & 15, 0), _small_f16(q.to(tl.int32) >> 4, 0)


_SIX_BITS = tl.constexpr("""{
.reg .b32 v, u, t0, t1, k;
mov.b32 k, 0x64206420;
shr.b32 v, $2, $4;
and.b32 v, v, 0x0F0F0F0F;
shr.b32 u, $3, $8;
and.b32 u, u, 0x03030303;
shl.b32 u, u, 4;
or.b32 v, v, u;
prmt.b32 t0, v, 0, 0x7170;
prmt.b32 t1, v, 0, 0x7372;
or.b32 t0, t0, 0x64006400;
or.b32 t1, t1, 0x64006400;
sub.f16x2 $0, t0, k;
sub.f16x2 $1, t1, k;
}""")  # four Q6_K values: ql's nibbles ($2 >> $4) and qh's 2-bit fields ($3 >> $8) of each byte, as 1024 + q in f16
# bits, minus 1024 + 32


@triton.jit
def six_bits_f16(ql, qh, s, t, ASM: tl.constexpr):
    """Q6_K values q - 32 as f16 (exact), q = ((ql >> s) & 15) | ((qh >> t) & 3) << 4 of bytes ql, qh (uint8): four
    an instance of `_SIX_BITS` on a GPU (ASM), else through int32."""
    if ASM:
        return tl.inline_asm_elementwise(_SIX_BITS, "=r,=r,r,r,r,r,r,r,r,r,r,r", [ql, qh, s, t], dtype=tl.float16,
                                         is_pure=True, pack=4)
    else:
        return _small_f16(((ql.to(tl.int32) >> s) & 15) | (((qh.to(tl.int32) >> t) & 3) << 4), 32)


@triton.jit
def sub64(a, b, c, d, r, k0, K, QT: tl.constexpr, ASM: tl.constexpr = 0):
    """Values k0 .. k0 + 63 (k0 a multiple of 64) of rows r (BN,) int64 of a Q4_K, Q6_K, Q8_0 or MXFP4 weight (the
    arrays `kernels.moe.tile_parts` picks) -> (BN, 64): the GEMM tile of `kernels.moe.experts_gemm`, small enough to
    stay in registers where `_tile`'s whole super-block does not. Q4_K, Q6_K: f16, the ints exact (`nibbles_f16`,
    `six_bits_f16`: PTX with ASM) times the f16-rounded scales, built as two (BN, 32) halves joined; Q8_0, MXFP4: f32,
    built as (BN, 2, 32) halves (values past K: 0). The scale fields a step reads are 4-byte words a row (Q4_K: sm4,
    and d with dmin; Q6_K: its four 16-value scales, its d still 2 bytes), so Triton's software pipeline copies them
    ahead as it does the quants: 1- and 2-byte loads are too narrow for its asynchronous copies, and each step waited
    for them (offline sm_90 SASS, session 43: a Q4_K GLU step's 12 global loads a thread -> none, 95 -> 80
    registers)."""
    h = tl.arange(0, 2)[None, :, None]
    l = tl.arange(0, 32)[None, None, :]
    rr = r[:, None, None]
    kb = k0 // 256
    j = (k0 % 256) // 64
    if QT == 12:  # Q4_K: 32 nibble bytes hold sub-blocks 2j (low) and 2j + 1 (high); b = sm4: their scales, mins
        # (bytes 2j, 2j + 1 of each); c = dm as words: d (low half), dmin
        lo, hi = nibbles_f16(tl.load(a + r[:, None] * (K // 2) + kb * 128 + j * 32 + tl.arange(0, 32)[None, :]), ASM)
        sm = tl.load(b + r * (K // 64) + k0 // 64)[:, None]
        dm = tl.load(c + r * (K // 256) + kb)[:, None]
        sd, sn = _half(dm, 0), _half(dm, 1)  # the super-block's d and dmin
        lo = lo * _scaled(sd, sm, 0) - _scaled(sn, sm, 16)
        hi = hi * _scaled(sd, sm, 8) - _scaled(sn, sm, 24)
        w = tl.permute(tl.join(lo, hi), (0, 2, 1))
    elif QT == 14:  # Q6_K: half j // 2 of the super-block, its quarters 2 (j % 2) (lo) and 2 (j % 2) + 1 (hi); c =
        # the 16-value scales as words: the step's four, one a row
        lc = tl.arange(0, 32)[None, :]
        ql = a + r[:, None] * (K // 2) + kb * 128 + (j // 2) * 64 + lc
        qh = tl.load(b + r[:, None] * (K // 4) + kb * 64 + (j // 2) * 32 + lc)
        sc = tl.load(c + r * (K // 64) + k0 // 64)
        sd = tl.load(d + r * (K // 256) + kb).to(tl.float32)
        s01 = tl.join(((sc << 24) >> 24).to(tl.float32) * sd, ((sc << 16) >> 24).to(tl.float32) * sd)
        s23 = tl.join(((sc << 8) >> 24).to(tl.float32) * sd, (sc >> 24).to(tl.float32) * sd)
        lo = tl.reshape(six_bits_f16(tl.load(ql), qh, (j % 2) * 4, (j % 2) * 4, ASM), (r.shape[0], 2, 16))
        hi = tl.reshape(six_bits_f16(tl.load(ql + 32), qh, (j % 2) * 4, (j % 2) * 4 + 2, ASM), (r.shape[0], 2, 16))
        w = tl.join(lo * s01.to(tl.float16)[:, :, None], hi * s23.to(tl.float16)[:, :, None])
        w = tl.reshape(tl.permute(w, (0, 3, 1, 2)), (r.shape[0], 2, 32))
    elif QT == 8:  # Q8_0: blocks k0 / 32 + h
        blk = k0 // 32 + h
        ok = (blk < K // 32) & (rr >= 0)
        q = tl.load(a + rr * K + blk * 32 + l, mask=ok, other=0).to(tl.float32)
        w = q * tl.load(b + rr * (K // 32) + blk, mask=ok, other=0).to(tl.float32)
    else:  # MXFP4: blocks k0 / 32 + h, byte i of a block holds values i and i + 16; times 2**(e - 128)
        blk = k0 // 32 + h
        ok = (blk < K // 32) & (rr >= 0)
        q = (tl.load(a + rr * (K // 2) + blk * 16 + l % 16, mask=ok, other=0).to(tl.int32) >> ((l // 16) * 4)) & 15
        w = _fp4(q) * e8m0_half(tl.load(b + rr * (K // 32) + blk, mask=ok, other=0).to(tl.int32))
    return tl.reshape(w, (r.shape[0], 64))


SUB64 = frozenset({12, 14, 8, 39})  # ggml types `sub64` reads


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


TILE = {12: (8, 32), 13: (8, 32), 14: (16, 16), 8: (8, 32),  # ggml type -> (G, L) of the super-block tile
        2: (8, 32), 3: (8, 32), 6: (8, 32), 7: (8, 32), 20: (8, 32), 39: (8, 32)}


def dequant(parts, qtype: int, n: int, k: int, out, rows=None, bn: int = 0, num_warps: int = 4) -> None:
    """Launch `dequant_kernel`: out (n, K) gets the rows (all, or `rows` (n,) int) of the weight.
    `bn` rows per program: `program_rows` (16 on a GPU)."""
    g, l = TILE[qtype]
    bn = program_rows(bn, 16, out)
    a, b, c, d = (list(parts) + [parts[0]] * 4)[:4]
    dequant_kernel[(triton.cdiv(n, bn), triton.cdiv(k, QK))](
        out, rows if rows is not None else out, a, b, c, d, n, k, out.stride(0),
        QT=qtype, G=g, L=l, BN=bn, HAS_ROWS=rows is not None, num_warps=num_warps)
