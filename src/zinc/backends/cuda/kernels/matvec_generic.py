"""A dequantize-matvec for every quant type of `quant` (the `_tile` functions), plain or over experts.

`matvec` is the decode path of the types without a tuned kernel in matvec.py: out[t, n] = sum_k
W[n, k] x[t, k], f32 accumulate; `dense_matvec` the same for a float weight kept dense (F32, F16,
BF16: routers, gates), which cuBLAS runs as a split-K GEMM plus a reduction at one-token rows. `matvec_experts` is the same product over the experts each token
selected: for an expert stack (E, N, K) repacked as E*N rows, out[t, j, n] = W[ids[t, j], n, :] .
x[t, (j)]. The expert ids are read on the device, so the launch needs no host sync (a CUDA graph can
hold it). Each program owns BN rows of one (token, expert) pair and walks K one 256-value tile at a time.
"""

from __future__ import annotations

import triton
import triton.language as tl

from zinc.backends.cuda.kernels.quant import QK, TILE, _tile, program_rows


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


__all__ = ["QK", "dense_matvec", "matvec", "matvec_experts"]
