"""Decode attention (a few query rows against an f16/f32 KV cache), split over the cells.

Pass 1 (`attn_split_kernel`, grid (T * Hkv, NSPLIT)): each program takes the R = Hq / Hkv query
heads of one KV head and one contiguous range of cells, and writes its running max, sum and
un-normalised output. Pass 2 (`attn_combine_kernel`, grid (T * Hq,)) merges the splits (and the
attention sink, when given). The readable extent is min(n_kv, S, q_pos[T-1] + 1) computed on the
device, so a captured graph stays right as the sequence grows; masking follows the positions
stored in the cache (empty cells hold -1).
"""

from __future__ import annotations

import triton
import triton.language as tl

NEG = tl.constexpr(-1.0e30)


@triton.jit
def attn_split_kernel(q, k, v, q_pos, kv_pos, m_out, l_out, o_out, T, S, n_kv, scale, cap, window,
                      R: tl.constexpr, RP: tl.constexpr, D: tl.constexpr, DV: tl.constexpr,
                      DP: tl.constexpr, DVP: tl.constexpr,
                      HKV: tl.constexpr, NSPLIT: tl.constexpr, BS: tl.constexpr,
                      SOFTCAP: tl.constexpr):
    pid = tl.program_id(0)
    sp = tl.program_id(1)
    t = pid // HKV
    hk = pid % HKV
    qp = tl.load(q_pos + t)
    last = tl.load(q_pos + T - 1)
    n_eff = tl.minimum(tl.minimum(n_kv, S), last + 1)
    chunk = tl.cdiv(tl.cdiv(n_eff, NSPLIT), BS) * BS
    start = sp * chunk
    end = tl.minimum(start + chunk, n_eff)
    rr = tl.arange(0, RP)
    dd = tl.arange(0, DP)
    dv = tl.arange(0, DVP)
    hq = hk * R + rr
    qv = tl.load(q + (t * HKV * R + hq)[:, None] * D + dd[None, :], mask=(rr < R)[:, None] & (dd < D)[None, :],
                 other=0.0)
    m_i = tl.full([RP], NEG, tl.float32)
    l_i = tl.zeros([RP], tl.float32)
    acc = tl.zeros([RP, DVP], tl.float32)
    for s0 in range(start, end, BS):
        cell = s0 + tl.arange(0, BS)
        cm = cell < end
        kt = tl.load(k + (cell.to(tl.int64) * HKV + hk)[:, None] * D + dd[None, :],
                     mask=cm[:, None] & (dd < D)[None, :], other=0.0).to(tl.float32)
        s = tl.sum(qv[:, None, :] * kt[None, :, :], axis=2)  # (RP, BS)
        if SOFTCAP:
            s = cap * (2.0 / (1.0 + tl.exp(-2.0 * s / cap)) - 1.0)
        s = s * scale
        kp = tl.load(kv_pos + cell, mask=cm, other=-1)
        vis = cm & (kp >= 0) & (kp <= qp) & ((window == 0) | (qp - kp < window))
        s = tl.where(vis[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        vt = tl.load(v + (cell.to(tl.int64) * HKV + hk)[:, None] * DV + dv[None, :],
                     mask=cm[:, None] & (dv < DV)[None, :], other=0.0).to(tl.float32)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.sum(p[:, :, None] * vt[None, :, :], axis=1)
        m_i = m_new
    row = (t * HKV * R + hq) * NSPLIT + sp  # (RP,)
    rm = rr < R
    tl.store(m_out + row, m_i, mask=rm)
    tl.store(l_out + row, l_i, mask=rm)
    tl.store(o_out + row[:, None] * DV + dv[None, :], acc, mask=rm[:, None] & (dv < DV)[None, :])


@triton.jit
def attn_combine_kernel(m_in, l_in, o_in, sinks, out, HQ, NSPLIT: tl.constexpr, NSP: tl.constexpr,
                        DV: tl.constexpr, DVP: tl.constexpr, HAS_SINK: tl.constexpr):
    row = tl.program_id(0)  # t * HQ + h
    sp = tl.arange(0, NSP)
    sm = sp < NSPLIT
    dv = tl.arange(0, DVP)
    dm = dv < DV
    m = tl.load(m_in + row * NSPLIT + sp, mask=sm, other=NEG)
    l = tl.load(l_in + row * NSPLIT + sp, mask=sm, other=0.0)
    o = tl.load(o_in + (row * NSPLIT + sp)[:, None] * DV + dv[None, :], mask=sm[:, None] & dm[None, :], other=0.0)
    mx = tl.max(m, axis=0)
    if HAS_SINK:
        sk = tl.load(sinks + row % HQ)
        mx = tl.maximum(mx, sk)
    w = tl.exp(m - mx)
    z = tl.sum(l * w, axis=0)
    if HAS_SINK:
        z = z + tl.exp(sk - mx)
    y = tl.sum(o * w[:, None], axis=0) / z
    tl.store(out + row * DV + dv, y, mask=dm)


def decode_attention(q, k, v, q_pos, kv_pos, n_kv: int, scale: float, window: int, cap: float,
                     sinks, scratch, out, nsplit: int = 16, bs: int = 16) -> None:
    """q (T, Hq, D) f32; k (S, Hkv, D), v (S, Hkv, DV); out (T, Hq, DV) f32; scratch: (m, l, o)."""
    t, hq, d = q.shape
    s, hkv, dv = v.shape
    r = hq // hkv
    m, l, o = scratch
    attn_split_kernel[(t * hkv, nsplit)](q, k, v, q_pos, kv_pos, m, l, o, t, s, n_kv, scale,
                                         cap if cap else 1.0, window, R=r,
                                         RP=max(2, triton.next_power_of_2(r)), D=d, DV=dv,
                                         DP=triton.next_power_of_2(d), DVP=triton.next_power_of_2(dv), HKV=hkv,
                                         NSPLIT=nsplit, BS=bs, SOFTCAP=bool(cap), num_warps=4)
    attn_combine_kernel[(t * hq,)](m, l, o, sinks if sinks is not None else m, out, hq, NSPLIT=nsplit,
                                   NSP=max(2, triton.next_power_of_2(nsplit)), DV=dv,
                                   DVP=triton.next_power_of_2(dv),
                                   HAS_SINK=sinks is not None, num_warps=1)
