"""Prefill attention (many query rows against the KV cache): one flash-attention pass on tensor cores.

Grid (query blocks of BM rows, query heads). Each program streams the cells of its KV head (f16, f32, or
q8_0 dequantized as read: `kvq8`) in blocks of BN: scores q.k on tensor cores (f16 operands, f32
accumulation; f32 operands when exact), optional softcap, the causal / window mask from the positions
stored in the cells (-1 = empty), an online softmax, and
P.V on tensor cores; an attention sink joins the denominator at the end. The cells read are
0 .. min(S, last position of the block + 1): a cell index equals its position until a ring cache
wraps, and after that every cell is read. The extent comes from `q_pos` on the device, so a
captured prefill graph stays right at every position (as the decode kernels in attention.py).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from zinc.backends.base import Q8Cells
from zinc.backends.cuda.kernels import kvq8

NEG = tl.constexpr(-1.0e30)


@triton.jit
def flash_prefill_kernel(q, k, v, q_pos, kv_pos, sinks, out, T, S, scale, cap, window, kd, vd,
                         HQ: tl.constexpr, HKV: tl.constexpr, D: tl.constexpr, DV: tl.constexpr,
                         DP: tl.constexpr, DVP: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                         SOFTCAP: tl.constexpr, HAS_SINK: tl.constexpr, OP: tl.constexpr, PREC: tl.constexpr,
                         Q8: tl.constexpr = False):
    mb = tl.program_id(0)
    h = tl.program_id(1)
    hk = h // (HQ // HKV)
    rows = mb * BM + tl.arange(0, BM)
    rm = rows < T
    dd = tl.arange(0, DP)
    dv = tl.arange(0, DVP)
    qp = tl.load(q_pos + rows, mask=rm, other=-1)
    qlast = tl.load(q_pos + tl.minimum(mb * BM + BM, T) - 1)
    n_eff = tl.minimum(S, qlast + 1)
    qv = tl.load(q + (rows * HQ + h)[:, None] * D + dd[None, :], mask=rm[:, None] & (dd < D)[None, :],
                 other=0.0).to(OP)
    m_i = tl.full([BM], NEG, tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, DVP], tl.float32)
    for s0 in range(0, n_eff, BN):
        cell = s0 + tl.arange(0, BN)
        cm = cell < n_eff
        ch = cell.to(tl.int64) * HKV + hk
        if Q8:  # K^T read as (DP, BN) tiles: a (BN, DP) q8_0 tile transposed gave wrong scores on the H200 (Triton 3.6)
            kt = kvq8.load_cols(k, kd, ch, cm, D, DP // 32, OP)
        else:
            kt = tl.trans(tl.load(k + ch[:, None] * D + dd[None, :], mask=cm[:, None] & (dd < D)[None, :],
                                  other=0.0).to(OP))
        s = tl.dot(qv, kt, input_precision=PREC)  # (BM, BN) f32
        if SOFTCAP:
            s = cap * (2.0 / (1.0 + tl.exp(-2.0 * s / cap)) - 1.0)
        s = s * scale
        kp = tl.load(kv_pos + cell, mask=cm, other=-1)
        vis = (cm & (kp >= 0))[None, :] & (kp[None, :] <= qp[:, None])
        vis = vis & ((window == 0) | (qp[:, None] - kp[None, :] < window))
        s = tl.where(vis, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        if Q8:
            vt = kvq8.load_rows(v, vd, ch, cm, DV, DVP // 32, OP)
        else:
            vt = tl.load(v + ch[:, None] * DV + dv[None, :], mask=cm[:, None] & (dv < DV)[None, :], other=0.0).to(OP)
        acc = acc * alpha[:, None] + tl.dot(p.to(OP), vt, input_precision=PREC)
        m_i = m_new
    if HAS_SINK:
        sk = tl.load(sinks + h)
        mx = tl.maximum(m_i, sk)
        w = tl.exp(m_i - mx)
        l_i = l_i * w + tl.exp(sk - mx)
        acc = acc * w[:, None]
    y = acc / tl.where(l_i > 0, l_i, 1.0)[:, None]
    tl.store(out + (rows * HQ + h)[:, None] * DV + dv[None, :], y, mask=rm[:, None] & (dv < DV)[None, :])


def tiles(d: int) -> tuple[int, int, int, int]:
    """(BM, BN, warps, stages) for head dim d: smaller tiles for wide heads (registers, shared memory)."""
    if d <= 128:
        return 64, 64, 4, 3
    if d <= 256:
        return 64, 32, 4, 2
    return 32, 32, 4, 1


def dequantize(c: Q8Cells):
    """q8_0 cells as an f16 tensor (the values kvq8.load_rows gives)."""
    return c.q.to(torch.float16) * c.d.repeat_interleave(32, dim=-1)


def prefill_attention(q, k, v, q_pos, kv_pos, scale: float, window: int, cap: float, sinks, out,
                      exact: bool = False) -> None:
    """q (T, Hq, D) f32; k (S, Hkv, D), v (S, Hkv, DV) f16/f32 cells (or `Q8Cells`, read dequantized);
    out (T, Hq, DV) f32. exact: f32 dot operands in full precision (else f16 operands, as flash attention does)."""
    t, hq, d = q.shape
    s, hkv, dv = v.shape
    q8 = isinstance(k, Q8Cells)
    if q8 and dv == 32 and d > 32:  # the H200 (Triton 3.6) gave wrong values or read out of bounds for q8_0 cells of
        # these widths (64 x 32 and 128 x 32: bench/cuda_flash_q8_probe.py; no family has them): f16 copies of the cells
        k, v, q8 = dequantize(k), dequantize(v), False
    (k, kd), (v, vd) = kvq8.planes(k), kvq8.planes(v)
    bm, bn, warps, stages = tiles(max(d, dv))
    flash_prefill_kernel[(triton.cdiv(t, bm), hq)](
        q, k, v, q_pos, kv_pos, sinks if sinks is not None else q, out, t, s, scale, cap if cap else 1.0,
        window, kd, vd, HQ=hq, HKV=hkv, D=d, DV=dv, DP=max(16, triton.next_power_of_2(d)),
        DVP=max(16, triton.next_power_of_2(dv)), BM=bm, BN=bn, SOFTCAP=bool(cap), HAS_SINK=sinks is not None,
        OP=tl.float32 if exact else tl.float16, PREC="ieee" if exact else "tf32", num_warps=warps,
        Q8=q8, num_stages=1 if exact else stages)
