"""Decode attention (1-16 query rows against an f16/f32 KV cache) on tensor cores, split over the cells.

Pass 1 (`attn_split_kernel`, grid (Hkv * row blocks, NSPLIT)): a program takes the rows (t, r) of the
R = Hq / Hkv query heads of one KV head times the T query rows (BM of them, padded to at least 16),
and one contiguous range of cells, streamed in blocks of BS cells: scores Q.K^T with `tl.dot`, the
softcap, the causal / window mask from the positions stored in the cells (-1 = empty), an online
softmax and P.V with `tl.dot`; it writes its running max, sum and un-normalised output, and the
last split of a row block to finish (an acquire-release counter per program row) merges the splits
(and the attention sink, when given) into the output: one launch, no combine pass.

Operands: an f16 cache is read as f16 and f32 accumulated; with EXACT the f32 rows of Q and of P are
each split into two f16 halves (hi + lo), so the products are as accurate as f32 math (the cache
holds f16 values exactly) for twice the (idle) tensor-core work. An f32 cache takes f32 dots.
The readable extent is min(n_kv, S, q_pos[T-1] + 1), computed on the device, so a captured graph
stays right as the sequence grows.
"""

from __future__ import annotations

import triton
import triton.language as tl

from zinc.backends.cuda.kernels.mmvq import q8_store

NEG = tl.constexpr(-1.0e30)
SMEM_BUDGET = 160 * 1024  # bytes of K+V tiles in shared memory per program (stages - 1 buffers)


@triton.jit
def _operand(x, KV16: tl.constexpr):
    """f32 rows -> the (hi, lo) operands of `_mma`: f16 halves with hi + lo = x to about 2^-22
    relative for an f16 cache, x itself for an f32 one."""
    hi = x
    lo = x
    if KV16:
        hi = x.to(tl.float16)
        lo = (x - hi.to(tl.float32)).to(tl.float16)
    return hi, lo


@triton.jit
def _mma(hi, lo, b, acc, KV16: tl.constexpr, EXACT: tl.constexpr):
    """acc + (hi + lo) @ b on tensor cores; b is a tile of the cache (f16, or f32 with f32 math)."""
    if KV16:
        acc = tl.dot(hi, b, acc)
        if EXACT:
            acc = tl.dot(lo, b, acc)
    else:
        acc = tl.dot(hi, b, acc, input_precision="tf32x3")
    return acc


@triton.jit
def attn_split_kernel(q, k, v, q_pos, kv_pos, m_out, l_out, o_out, T, S, n_kv, scale, cap, window, NSPLIT,
                      cnt, sinks, out, xq, xd, xs, HQ,
                      R: tl.constexpr, D: tl.constexpr, DV: tl.constexpr, DP: tl.constexpr,
                      DVP: tl.constexpr, HKV: tl.constexpr, BM: tl.constexpr,
                      BS: tl.constexpr, SOFTCAP: tl.constexpr, KV16: tl.constexpr, EXACT: tl.constexpr,
                      HAS_SINK: tl.constexpr, QUANT: tl.constexpr, NBQ: tl.constexpr):
    pid = tl.program_id(0)
    sp = tl.program_id(1)
    nrb = tl.cdiv(T * R, BM)
    hk = pid // nrb
    i = (pid % nrb) * BM + tl.arange(0, BM)  # row t * R + r of this KV head
    rm = i < T * R
    t = i // R
    head = (t * HKV + hk) * R + i % R  # (BM,) row of the (T, Hq) query / output
    qp = tl.load(q_pos + t, mask=rm, other=-1)
    n_eff = tl.minimum(tl.minimum(n_kv, S), tl.load(q_pos + T - 1) + 1)
    chunk = tl.cdiv(tl.cdiv(n_eff, NSPLIT), BS) * BS
    start = sp * chunk
    end = tl.minimum(start + chunk, n_eff)
    dd = tl.arange(0, DP)
    dv = tl.arange(0, DVP)
    qv = tl.load(q + head[:, None] * D + dd[None, :], mask=rm[:, None] & (dd < D)[None, :], other=0.0)
    qh, ql = _operand(qv, KV16)
    m_i = tl.full([BM], NEG, tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, DVP], tl.float32)
    for s0 in range(start, end, BS):
        cell = s0 + tl.arange(0, BS)
        cm = cell < end
        c64 = cell.to(tl.int64) * HKV + hk
        kt = tl.load(k + c64[None, :] * D + dd[:, None], mask=cm[None, :] & (dd < D)[:, None], other=0.0)
        vt = tl.load(v + c64[:, None] * DV + dv[None, :], mask=cm[:, None] & (dv < DV)[None, :], other=0.0)
        kp = tl.load(kv_pos + cell, mask=cm, other=-1)
        s = _mma(qh, ql, kt, tl.zeros([BM, BS], tl.float32), KV16, EXACT)  # (BM, BS)
        if SOFTCAP:
            s = cap * (2.0 / (1.0 + tl.exp(-2.0 * s / cap)) - 1.0)
        vis = (kp[None, :] >= 0) & (kp[None, :] <= qp[:, None])
        vis = vis & ((window == 0) | (qp[:, None] - kp[None, :] < window))
        s = tl.where(vis, s * scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        ph, pl = _operand(p, KV16)
        acc = _mma(ph, pl, vt, acc * alpha[:, None], KV16, EXACT)
        m_i = m_new
    row = head * NSPLIT + sp
    tl.store(m_out + row, m_i, mask=rm)
    tl.store(l_out + row, l_i, mask=rm)
    tl.store(o_out + row[:, None] * DV + dv[None, :], acc, mask=rm[:, None] & (dv < DV)[None, :])
    tl.debug_barrier()  # every thread's stores precede the count
    if tl.atomic_add(cnt + pid, 1, sem="acq_rel", scope="gpu") == NSPLIT - 1:  # the last split: combine
        tl.store(cnt + pid, 0)
        _combine(m_out, l_out, o_out, sinks, out, xq, xd, xs, head, rm, NSPLIT, HQ, DV, DVP, BM, HAS_SINK, QUANT,
                 NBQ)


@triton.jit
def _combine(m_in, l_in, o_in, sinks, out, xq, xd, xs, head, rm, NSPLIT, HQ, DV: tl.constexpr, DVP: tl.constexpr,
             BM: tl.constexpr, HAS_SINK: tl.constexpr, QUANT: tl.constexpr, NBQ: tl.constexpr):
    """The output rows `head` (BM,) (where rm) from the NSPLIT splits' maxima, sums and outputs (and the
    attention sink of the head, when given): a softmax over all the cells. With QUANT (DV = NBQ * 32)
    the rows are also written on 8 bits for the output projection's matvec: blocks head * NBQ ... of
    the (T, HQ * DV) activation, i.e. of one flat row (`mmvq.q8_store`)."""
    dv = tl.arange(0, DVP)
    om = rm[:, None] & (dv < DV)[None, :]
    mx = tl.full([BM], NEG, tl.float32)
    for sp in range(NSPLIT):
        mx = tl.maximum(mx, tl.load(m_in + head * NSPLIT + sp, mask=rm, other=NEG, cache_modifier=".cg"))
    if HAS_SINK:
        sk = tl.load(sinks + head % HQ, mask=rm, other=NEG)
        mx = tl.maximum(mx, sk)
    z = tl.zeros([BM], tl.float32)
    y = tl.zeros([BM, DVP], tl.float32)
    for sp in range(NSPLIT):
        r = head * NSPLIT + sp
        w = tl.exp(tl.load(m_in + r, mask=rm, other=NEG, cache_modifier=".cg") - mx)
        z += tl.load(l_in + r, mask=rm, other=0.0, cache_modifier=".cg") * w
        y += tl.load(o_in + r[:, None] * DV + dv[None, :], mask=om, other=0.0, cache_modifier=".cg") * w[:, None]
    if HAS_SINK:
        z += tl.exp(sk - mx)
    y = y / tl.where(rm, z, 1.0)[:, None]
    tl.store(out + head[:, None] * DV + dv[None, :], y, mask=om)
    if QUANT:
        b = (head[:, None] * NBQ + tl.arange(0, NBQ)[None, :]).reshape(BM * NBQ)
        ok = (rm[:, None] & (tl.arange(0, NBQ) >= 0)[None, :]).reshape(BM * NBQ)
        q8_store(tl.reshape(y, (BM * NBQ, 2, 4, 4)), b, 0, HQ * DV, ok, xq, xd, xs)


def tiles(rows: int, d: int, dv: int, bs: int, stages: int, warps: int | None, esize: int) -> tuple[int, ...]:
    """(BM, BS, stages, warps) that fit in registers and shared memory: BM = the rows padded to 16, at
    most 64, with BM x DV at most 8192 accumulators (4096 for an f32 cache); BS x D at most 32 KB of
    cache; the stages - 1 buffers of K+V tiles in flight within SMEM_BUDGET; warps (when not given)
    4 (on the H200, 8 warps gave wrong results past 16 rows: gpt-oss-20b, 8 query heads per KV head)."""
    dp, dvp = max(16, triton.next_power_of_2(d)), max(16, triton.next_power_of_2(dv))
    bm = min(max(16, triton.next_power_of_2(rows)), 64, max(16, 16384 // (dvp * esize)))
    bs = max(16, min(bs, 32768 // (max(dp, dvp) * esize)))
    while stages > 2 and (stages - 1) * bs * (dp + dvp) * esize > SMEM_BUDGET:
        stages -= 1
    return bm, bs, stages, warps or 4


def decode_attention(q, k, v, q_pos, kv_pos, n_kv: int, scale: float, window: int, cap: float,
                     sinks, scratch, out, counters, nsplit: int = 32, bs: int = 64, warps: int | None = None,
                     stages: int = 3, exact: bool = True, q8=None) -> None:
    """q (T, Hq, D) f32; k (S, Hkv, D), v (S, Hkv, DV) f16/f32; out (T, Hq, DV) f32;
    scratch: (m, l, o) of T * Hq * nsplit rows; counters: zeroed int32, at least Hkv * cdiv(T * Hq / Hkv,
    16) (left zeroed). bs, stages, warps: see `tiles`. q8: (xq, xd, xs) of `mmvq.q8_buffers(T, Hq * DV)`
    to also get the output on 8 bits (DV a power of two >= 32)."""
    t, hq, d = q.shape
    s, hkv, dv = v.shape
    r = hq // hkv
    m, l, o = scratch
    bm, bs, stages, warps = tiles(t * r, d, dv, bs, stages, warps, k.element_size())
    dp, dvp = max(16, triton.next_power_of_2(d)), max(16, triton.next_power_of_2(dv))
    grid = (hkv * triton.cdiv(t * r, bm), nsplit)
    assert counters.numel() >= grid[0], "too few counters"
    xq, xd, xs = q8 if q8 is not None else (m, m, m)
    attn_split_kernel[grid](
        q, k, v, q_pos, kv_pos, m, l, o, t, s, n_kv, scale, cap if cap else 1.0, window, nsplit, counters,
        sinks if sinks is not None else m, out, xq, xd, xs, hq, R=r, D=d, DV=dv, DP=dp, DVP=dvp, HKV=hkv, BM=bm,
        BS=bs, SOFTCAP=bool(cap), KV16=k.element_size() == 2, EXACT=exact, HAS_SINK=sinks is not None,
        QUANT=q8 is not None, NBQ=max(1, dv // 32), num_warps=warps, num_stages=stages)
