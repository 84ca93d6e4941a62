"""Decode attention (1-16 query rows against an f16/f32 KV cache) on tensor cores, split over the cells.

Pass 1 (`attn_split_kernel`, grid (Hkv * row blocks, NSPLIT)): a program takes the rows (t, r) of the
R = Hq / Hkv query heads of one KV head times the T query rows (BM of them, padded to at least 16),
and one contiguous range of cells, streamed in blocks of BS cells: scores Q.K^T with `tl.dot`, the
softcap, the causal / window mask from the positions stored in the cells (-1 = empty), an online
softmax and P.V with `tl.dot`; it writes its running max, sum and un-normalised output. Pass 2
(`attn_combine_kernel`, grid (T * Hq,)) merges the splits (and the attention sink, when given).

Operands: an f16 cache is read as f16 and f32 accumulated; with EXACT the f32 rows of Q and of P are
each split into two f16 halves (hi + lo), so the products are as accurate as f32 math (the cache
holds f16 values exactly) for twice the (idle) tensor-core work. An f32 cache takes f32 dots.
The readable extent is min(n_kv, S, q_pos[T-1] + 1), computed on the device, so a captured graph
stays right as the sequence grows.

FUSE (one token): the split kernel also does the layer's rope_qk_kv_write (kernels/elementwise.py
rope_qk_kernel). Each program norms and ropes its R query heads from the raw q, and its KV head's new
K (rounded to the cache type) and V; the loop over its cells skips the new token's cell (slot, read
on the device) and the program whose range holds it adds the new K / V after the loop as one more
cell (`_attend_cell`: f32 products of the same operands); program (row block 0, split 0) of each KV
head stores them in the cell, and that of KV head 0 the position. No program reads the cell from
the cache.
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
def _attend(qh, ql, kt, vt, kp, qp, m_i, l_i, acc, s0, scale, cap, window, SOFTCAP: tl.constexpr,
            KV16: tl.constexpr, EXACT: tl.constexpr):
    """One tile of cells (K^T kt (DP, BS), V vt (BS, DVP), positions kp (BS,), -1 = empty) into the
    online softmax state (m_i, l_i, acc) of the query rows at positions qp; s0: zeros (BM, BS)."""
    s = _mma(qh, ql, kt, s0, KV16, EXACT)  # (BM, BS)
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
    return m_new, l_i, acc


@triton.jit
def _attend_cell(qh, ql, kc, vc, kpos, qp, m_i, l_i, acc, scale, cap, window, SOFTCAP: tl.constexpr,
                 KV16: tl.constexpr, EXACT: tl.constexpr):
    """`_attend` of one cell (K kc (DP,), V vc (DVP,) f32, position kpos, -1 = none) with the same
    operands multiplied in f32 (no tensor-core tile for one column)."""
    qf = qh.to(tl.float32)
    if KV16 and EXACT:
        qf += ql.to(tl.float32)
    s = tl.sum(qf * kc[None, :], axis=1)  # (BM,)
    if SOFTCAP:
        s = cap * (2.0 / (1.0 + tl.exp(-2.0 * s / cap)) - 1.0)
    vis = (kpos >= 0) & (kpos <= qp) & ((window == 0) | (qp - kpos < window))
    s = tl.where(vis, s * scale, float("-inf"))
    m_new = tl.maximum(m_i, s)
    p = tl.exp(s - m_new)
    alpha = tl.exp(m_i - m_new)
    l_i = l_i * alpha + p
    if KV16 and not EXACT:
        p = p.to(tl.float16).to(tl.float32)
    acc = acc * alpha[:, None] + p[:, None] * vc[None, :]
    return m_new, l_i, acc


@triton.jit
def _norm_rope(x, base, d, dm, w, p, c, eps, mscale, D: tl.constexpr, AXIS: tl.constexpr, NDIMS: tl.constexpr,
               NEOX: tl.constexpr, NORM: tl.constexpr):
    """x[base + d] (d < D, where dm) RMS-normed along AXIS (d's axis) times w[d] with NORM, then dims
    d < NDIMS rotated with their pair partner by angle p * c[i] (NEOX pairs (i, i + NDIMS/2), else
    (2i, 2i+1)): the same float operations as `elementwise._rope_heads`. Masked entries are 0."""
    half: tl.constexpr = NDIMS // 2
    if NEOX:
        first = d < half
        partner = tl.where(first, d + half, d - half)
        i = tl.where(first, d, d - half)
    else:
        first = d % 2 == 0
        partner = d + 1 - 2 * (d % 2)
        i = d // 2
    rot = d < NDIMS
    dm = dm & (d < D)
    xv = tl.load(x + base + d, mask=dm, other=0.0)
    xp = tl.load(x + base + partner, mask=dm & rot, other=0.0)
    if NORM:
        inv = tl.expand_dims(1.0 / tl.sqrt(tl.sum(xv * xv, axis=AXIS) / D + eps), AXIS)
        xv = xv * inv * tl.load(w + d, mask=d < D, other=0.0)
        xp = xp * inv * tl.load(w + partner, mask=rot, other=0.0)
    th = p.to(tl.float32) * tl.load(c + i, mask=rot, other=0.0)
    cs = tl.cos(th) * mscale
    sn = tl.sin(th) * mscale
    y = tl.where(first, xv * cs - xp * sn, xp * sn + xv * cs)
    return tl.where(dm, tl.where(rot, y, xv), 0.0)


@triton.jit
def attn_split_kernel(q, k, v, q_pos, kv_pos, m_out, l_out, o_out, T, S, n_kv, scale, cap, window, NSPLIT, QS,
                      kn, vn, qw, kw, c, slots, KS, VS, eps, mscale,
                      R: tl.constexpr, D: tl.constexpr, DV: tl.constexpr, DP: tl.constexpr,
                      DVP: tl.constexpr, HKV: tl.constexpr, BM: tl.constexpr,
                      BS: tl.constexpr, SOFTCAP: tl.constexpr, KV16: tl.constexpr, EXACT: tl.constexpr,
                      FUSE: tl.constexpr, NDIMS: tl.constexpr, NEOX: tl.constexpr, QNORM: tl.constexpr,
                      KNORM: tl.constexpr, FROM_POS: tl.constexpr):
    """q: (T, HQ, D) contiguous; with FUSE (T = 1) the raw Q (heads QS apart), K kn (heads KS apart)
    and V vn (heads VS apart) of rope_qk_kv_write, with its norm weights qw / kw (QNORM / KNORM),
    angles c, mscale, NDIMS, NEOX; the token's cell is slots[0], or q_pos[0] % S with FROM_POS."""
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
    if FUSE:
        p0 = tl.load(q_pos)
        if FROM_POS:
            slot = p0 % S
        else:
            slot = tl.load(slots)
        qv = _norm_rope(q, head[:, None] * QS, dd[None, :], rm[:, None], qw, p0, c, eps, mscale, D, 1, NDIMS,
                        NEOX, QNORM)
    else:
        qv = tl.load(q + head[:, None] * D + dd[None, :], mask=rm[:, None] & (dd < D)[None, :], other=0.0)
    qh, ql = _operand(qv, KV16)
    m_i = tl.full([BM], NEG, tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, DVP], tl.float32)
    for s0 in range(start, end, BS):
        cell = s0 + tl.arange(0, BS)
        cm = cell < end
        if FUSE:
            cm = cm & (cell != slot)
        c64 = cell.to(tl.int64) * HKV + hk
        kt = tl.load(k + c64[None, :] * D + dd[:, None], mask=cm[None, :] & (dd < D)[:, None], other=0.0)
        vt = tl.load(v + c64[:, None] * DV + dv[None, :], mask=cm[:, None] & (dv < DV)[None, :], other=0.0)
        kp = tl.load(kv_pos + cell, mask=cm, other=-1)
        m_i, l_i, acc = _attend(qh, ql, kt, vt, kp, qp, m_i, l_i, acc, tl.zeros([BM, BS], tl.float32), scale, cap,
                                window, SOFTCAP, KV16, EXACT)
    if FUSE:
        ty = k.dtype.element_ty
        knew = _norm_rope(kn, hk * KS, dd, dd >= 0, kw, p0, c, eps, mscale, D, 0, NDIMS, NEOX, KNORM).to(ty)
        vnew = tl.load(vn + hk * VS + dv, mask=dv < DV, other=0.0).to(ty)
        own = (slot >= start) & (slot < end)
        m_i, l_i, acc = _attend_cell(qh, ql, knew.to(tl.float32), vnew.to(tl.float32), tl.where(own, p0, -1), qp,
                                     m_i, l_i, acc, scale, cap, window, SOFTCAP, KV16, EXACT)
        wr = (sp == 0) & (pid % nrb == 0)
        cb = slot.to(tl.int64) * HKV + hk
        tl.store(k + cb * D + dd, knew, mask=(dd < D) & wr)
        tl.store(v + cb * DV + dv, vnew, mask=(dv < DV) & wr)
        tl.store(kv_pos + slot, p0, mask=wr & (hk == 0))
    row = head * NSPLIT + sp
    tl.store(m_out + row, m_i, mask=rm)
    tl.store(l_out + row, l_i, mask=rm)
    tl.store(o_out + row[:, None] * DV + dv[None, :], acc, mask=rm[:, None] & (dv < DV)[None, :])


@triton.jit
def attn_combine_kernel(m_in, l_in, o_in, sinks, out, xq, xd, xs, HQ, NSPLIT: tl.constexpr, NSP: tl.constexpr,
                        DV: tl.constexpr, DVP: tl.constexpr, HAS_SINK: tl.constexpr, CH: tl.constexpr,
                        QUANT: tl.constexpr, NBQ: tl.constexpr):
    """One output row: the max over the NSP (>= NSPLIT) splits' maxima, then their outputs CH at a time.
    With QUANT (DV = NBQ * 32) the row is also written on 8 bits for the output projection's matvec:
    blocks h * NBQ ... of the (T, HQ * DV) activation row t (`mmvq.q8_store`)."""
    row = tl.program_id(0)  # t * HQ + h
    sp = tl.arange(0, NSP)
    sm = sp < NSPLIT
    dv = tl.arange(0, DVP)
    dm = dv < DV
    m = tl.load(m_in + row * NSPLIT + sp, mask=sm, other=NEG)
    l = tl.load(l_in + row * NSPLIT + sp, mask=sm, other=0.0)
    mx = tl.max(m, axis=0)
    if HAS_SINK:
        sk = tl.load(sinks + row % HQ)
        mx = tl.maximum(mx, sk)
    z = tl.sum(l * tl.exp(m - mx), axis=0)
    if HAS_SINK:
        z = z + tl.exp(sk - mx)
    y = tl.zeros([DVP], tl.float32)
    for c in tl.static_range(0, NSP, CH):
        spc = c + tl.arange(0, CH)
        cm = spc < NSPLIT
        w = tl.exp(tl.load(m_in + row * NSPLIT + spc, mask=cm, other=NEG) - mx)
        o = tl.load(o_in + (row * NSPLIT + spc)[:, None] * DV + dv[None, :], mask=cm[:, None] & dm[None, :],
                    other=0.0)
        y += tl.sum(o * w[:, None], axis=0)
    y = y / z
    tl.store(out + row * DV + dv, y, mask=dm)
    if QUANT:
        b = (row % HQ) * NBQ + tl.arange(0, NBQ)
        q8_store(tl.reshape(y, (NBQ, 2, 4, 4)), b, row // HQ, HQ * DV, b >= 0, xq, xd, xs)


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
                     sinks, scratch, out, nsplit: int = 32, bs: int = 64, warps: int | None = None,
                     stages: int = 3, exact: bool = True, q8=None, fuse=None) -> None:
    """q (T, Hq, D) f32 (rows of D floats, heads q.stride(1) apart); k (S, Hkv, D), v (S, Hkv, DV)
    f16/f32; out (T, Hq, DV) f32; scratch: (m, l, o) of T * Hq * nsplit rows. bs, stages, warps: see
    `tiles`. q8: (xq, xd, xs) of `mmvq.q8_buffers(T, Hq * DV)` to also get the output on 8 bits (DV a
    power of two >= 32). fuse (T = 1; q is then the raw Q): the rest of rope_qk_kv_write, (k_raw
    (Hkv, D), v_raw (Hkv, DV), q_w, k_w, c, mscale, n_dims, neox, eps, slots, from_pos), rows of k_raw /
    v_raw contiguous, norm weights None for none; the cache cell of the token is written here."""
    t, hq, d = q.shape
    s, hkv, dv = v.shape
    r = hq // hkv
    m, l, o = scratch
    bm, bs, stages, warps = tiles(t * r, d, dv, bs, stages, warps, k.element_size())
    dp, dvp = max(16, triton.next_power_of_2(d)), max(16, triton.next_power_of_2(dv))
    kn, vn, qw, kw, c, mscale, n_dims, neox, eps, slots, from_pos = fuse or (m, m, None, None, m, 1.0, 0, False,
                                                                            0.0, None, False)
    attn_split_kernel[(hkv * triton.cdiv(t * r, bm), nsplit)](
        q, k, v, q_pos, kv_pos, m, l, o, t, s, n_kv, scale, cap if cap else 1.0, window, nsplit, q.stride(1),
        kn, vn, m if qw is None else qw, m if kw is None else kw, c, q_pos if slots is None else slots,
        kn.stride(0), vn.stride(0), eps, mscale, R=r, D=d,
        DV=dv, DP=dp, DVP=dvp, HKV=hkv, BM=bm, BS=bs, SOFTCAP=bool(cap), KV16=k.element_size() == 2,
        EXACT=exact, FUSE=fuse is not None, NDIMS=n_dims, NEOX=neox, QNORM=qw is not None, KNORM=kw is not None,
        FROM_POS=from_pos, num_warps=warps, num_stages=stages)
    nsp, dvp = max(2, triton.next_power_of_2(nsplit)), triton.next_power_of_2(dv)
    xq, xd, xs = q8 if q8 is not None else (m, m, m)
    attn_combine_kernel[(t * hq,)](m, l, o, sinks if sinks is not None else m, out, xq, xd, xs, hq, NSPLIT=nsplit,
                                   NSP=nsp, DV=dv, DVP=dvp, HAS_SINK=sinks is not None,
                                   CH=min(nsp, max(2, 4096 // dvp)), QUANT=q8 is not None, NBQ=max(1, dv // 32),
                                   num_warps=4 if nsp * dvp >= 4096 else 1)
