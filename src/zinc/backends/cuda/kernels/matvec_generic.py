"""A dequantize-matvec for every quant type of `quant` (the `_tile` functions), plain or over experts.

`matvec` is the decode path of the types without a tuned kernel in matvec.py: out[t, n] = sum_k
W[n, k] x[t, k], f32 accumulate; `dense_matvec` the same for a float weight kept dense (F32, F16,
BF16: routers, gates), which cuBLAS runs as a split-K GEMM plus a reduction at one-token rows. `matvec_experts` is the same product over the experts each token
selected: for an expert stack (E, N, K) repacked as E*N rows, out[t, j, n] = W[ids[t, j], n, :] .
x[t, (j)]. The expert ids are read on the device, so the launch needs no host sync (a CUDA graph can
hold it). Each program owns BN rows of one (token, expert) pair and walks K one 256-value tile at a time.
`q8_matvec` is a Q8_0 matvec on f32 activations (CudaOps' exact mode; decode takes mmvq's 8-bit activations,
faster).
"""

from __future__ import annotations

import triton
import triton.language as tl

from zinc.backends.cuda.kernels.elementwise import glu_act
from zinc.backends.cuda.kernels.quant import INTERPRETER_ROWS, QK, TILE, _tile, program_rows


@triton.jit
def gmv_kernel(out, x, ids, a, b, c, d, N, K, NSEL, sxt, sxj,
               QT: tl.constexpr, G: tl.constexpr, L: tl.constexpr, BN: tl.constexpr, HAS_IDS: tl.constexpr):
    """Grid (cdiv(N, BN), P): program (i, p) writes out[p, i*BN : (i+1)*BN] (P = T, or T*NSEL with ids)."""
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    p = tl.program_id(1).to(tl.int64)
    rc = tl.where(rn < N, rn, 0).to(tl.int64)
    if HAS_IDS:
        e = tl.load(ids + p).to(tl.int64)
        r = e * N + rc
        xrow = x + (p // NSEL) * sxt + (p % NSEL) * sxj
    else:
        r = rc
        xrow = x + p * sxt
    xo = tl.arange(0, G)[:, None] * L + tl.arange(0, L)[None, :]
    acc = tl.zeros((BN,), dtype=tl.float32)
    for kb in range(0, tl.cdiv(K, 256)):
        w = _tile(a, b, c, d, r, kb, K, QT)
        xk = tl.load(xrow + kb * 256 + xo, mask=(kb * 256 + xo) < K, other=0.0)
        acc += tl.sum(tl.sum(w * xk[None, :, :], axis=2), axis=1)
    tl.store(out + p * N + rn, acc, mask=rn < N)


@triton.jit
def dense_mv_kernel(out, x, w, N, K, sxt, BN: tl.constexpr, BK: tl.constexpr):
    """Grid (cdiv(N, BN), T): out[t, BN rows] = w[rows] . x[t], f32 math on f32/f16/bf16 weights."""
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    t = tl.program_id(1).to(tl.int64)
    r = tl.where(rn < N, rn, 0).to(tl.int64)
    acc = tl.zeros((BN, BK), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + tl.arange(0, BK)
        km = kk < K
        xv = tl.load(x + t * sxt + kk, mask=km, other=0.0)
        wv = tl.load(w + r[:, None] * K + kk[None, :], mask=km[None, :], other=0.0).to(tl.float32)
        acc += wv * xv[None, :]
    tl.store(out + t * N + rn, tl.sum(acc, axis=1), mask=rn < N)


def dense_matvec(x, w, out, bn: int = 0, bk: int = 512) -> None:
    """x (T, K) f32 (rows contiguous), w (N, K) f32/f16/bf16 contiguous -> out (T, N) f32 contiguous.
    bn rows a program (0: `program_rows`, 2 on a GPU)."""
    n, k = w.shape
    bn = program_rows(bn, 2, x)
    bk = min(bk, max(16, triton.next_power_of_2(k)))
    dense_mv_kernel[(triton.cdiv(n, bn), x.shape[0])](out, x, w, n, k, x.stride(0), BN=bn, BK=bk,
                                                      num_warps=4 if bn * bk >= 512 else 1)


@triton.jit
def _q8f_step(qs, d, wo, so, xv, k0, km, EVEN: tl.constexpr):
    """One step of `q8f_kernel`: the (BN, NB, 32) weights at k0 (offsets wo, block scales at so) times xv (NB, 32),
    scaled; km masks the blocks past K unless EVEN."""
    if EVEN:
        w = tl.load(qs + wo + k0)
        s = tl.load(d + so + k0 // 32).to(tl.float32)
    else:
        w = tl.load(qs + wo + k0, mask=km[None, :, None], other=0)
        s = tl.load(d + so + k0 // 32, mask=km[None, :], other=0.0).to(tl.float32)
    return w.to(tl.float32) * xv[None, :, :] * s[:, :, None]


@triton.jit
def q8f_kernel(out, x, qs, d, qs2, d2, N, K, sxt, BN: tl.constexpr, BK: tl.constexpr, EVEN: tl.constexpr,
               ACT: tl.constexpr):
    """Q8_0 rows on f32 activations; grid (cdiv(N, BN), T): out[t, BN rows] = sum over blocks b of
    d[row, b] * (q[row, block b] . x[t, block b]), f32 math; with ACT >= 0 (a GLU code) the up weight (qs2, d2)
    too: out = act(gate) * up. qs (N, K) int8, d (N, K / 32) f16. Each step loads (BN, BK / 32, 32) weights and
    accumulates their scaled products elementwise; the sums are taken once, after the loop."""
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    t = tl.program_id(1).to(tl.int64)
    r = tl.where(rn < N, rn, 0).to(tl.int64)
    nb = K // 32
    NB: tl.constexpr = BK // 32
    j = tl.arange(0, NB)
    i = tl.arange(0, 32)
    wo = r[:, None, None] * K + j[None, :, None] * 32 + i[None, None, :]  # (BN, NB, 32) offsets of the first step
    so = r[:, None] * nb + j[None, :]  # (BN, NB)
    acc = tl.zeros((BN, NB, 32), dtype=tl.float32)
    acc2 = tl.zeros((BN, NB, 32), dtype=tl.float32)
    for k0 in range(0, K, BK):
        km = (k0 // 32 + j) < nb
        xo = x + t * sxt + k0 + j[:, None] * 32 + i[None, :]  # (NB, 32)
        xv = tl.load(xo) if EVEN else tl.load(xo, mask=km[:, None], other=0.0)
        acc += _q8f_step(qs, d, wo, so, xv, k0, km, EVEN)
        if ACT >= 0:
            acc2 += _q8f_step(qs2, d2, wo, so, xv, k0, km, EVEN)
    y = tl.sum(tl.sum(acc, axis=2), axis=1)
    if ACT >= 0:
        y = glu_act(y, tl.sum(tl.sum(acc2, axis=2), axis=1), ACT)
    tl.store(out + t * N + rn, y, mask=rn < N)


# (rows a program, values a step, warps): H200, bench/cuda_q8f_bench.py, summed over Qwen3-8B's one-row shapes. The
# kernel's first form (each step's blocks summed) was best here, 273 us against mmvq's 212 (8-bit activations), so
# decode keeps mmvq. This form (sums after the loop, session 18): 425 us here, 328.5 at its best (4, 512, 4); not
# retuned (exact mode only)
Q8F_CONFIG = (8, 1024, 4)


def q8_matvec(x, parts, n: int, k: int, out, glu: tuple | None = None, cfg: tuple | None = None) -> None:
    """Q8_0 weight parts (qs (N, K) int8, d (N, K/32) f16) times x (T, K) f32 (rows contiguous) -> out (T, N) f32
    contiguous, on the f32 activations (no 8-bit quantization of x: the NumPy backend's arithmetic). glu: (the up
    weight's parts, a GLU_ACTS code): out = act(x W^T) * (x W_up^T)."""
    bn, bk, nw = cfg or (Q8F_CONFIG if x.is_cuda else (INTERPRETER_ROWS, 256, 4))
    bk = min(bk, max(32, triton.next_power_of_2(k)))
    qs, d = parts
    qs2, d2 = glu[0] if glu else parts
    q8f_kernel[(triton.cdiv(n, bn), x.shape[0])](out, x, qs, d, qs2, d2, n, k, x.stride(0), BN=bn, BK=bk,
                                                 EVEN=k % bk == 0, ACT=glu[1] if glu else -1, num_warps=nw)


def _ptrs(parts):
    return (list(parts) + [parts[0]] * 4)[:4]


def matvec(x, parts, qtype: int, n: int, k: int, out, bn: int = 0, num_warps: int = 4) -> None:
    """x (T, K) f32 contiguous -> out (T, N) f32 contiguous."""
    g, l = TILE[qtype]
    bn = program_rows(bn, 16, x)
    a, b, c, d = _ptrs(parts)
    gmv_kernel[(triton.cdiv(n, bn), x.shape[0])](out, x, out, a, b, c, d, n, k, 1, x.stride(0), 0,
                                                 QT=qtype, G=g, L=l, BN=bn, HAS_IDS=False, num_warps=num_warps)


def matvec_experts(x, parts, qtype: int, n: int, k: int, ids, out, bn: int = 0, num_warps: int = 4) -> None:
    """x (T, K) or (T, NSEL, K) f32 (last axis contiguous), ids (T, NSEL) int contiguous -> out (T, NSEL, N)."""
    g, l = TILE[qtype]
    bn = program_rows(bn, 16, x)
    a, b, c, d = _ptrs(parts)
    t, nsel = ids.shape
    sxj = x.stride(1) if x.dim() == 3 else 0
    gmv_kernel[(triton.cdiv(n, bn), t * nsel)](out, x, ids, a, b, c, d, n, k, nsel, x.stride(0), sxj,
                                               QT=qtype, G=g, L=l, BN=bn, HAS_IDS=True, num_warps=num_warps)


__all__ = ["QK", "dense_matvec", "matvec", "matvec_experts", "q8_matvec"]
