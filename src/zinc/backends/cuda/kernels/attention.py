"""Decode attention (1-16 query rows against an f16/f32 KV cache) on tensor cores, split over the cells.

Pass 1 (`attn_split_kernel`, grid (Hkv * row blocks, NSPLIT)): a program takes the rows (t, r) of the
R = Hq / Hkv query heads of one KV head times the T query rows (BM of them, padded to at least 16),
and one contiguous range of cells, streamed in blocks of BS cells: scores Q.K^T with `tl.dot`, the
softcap, the causal / window mask from the positions stored in the cells (-1 = empty), an online
softmax and P.V with `tl.dot`; it writes its running max, sum and un-normalised output. Pass 2
(`attn_combine_kernel`, grid (T * Hq, DV / DC)) merges the splits (and the attention sink, when given).
With one split (FINAL) Pass 1 writes the output itself (and its 8-bit form) and there is no Pass 2.

On short caches the split kernel's time is the length of its instruction stream, run by one or two warps a scheduler,
more than its loads (Nsight Compute: bench/RESULTS.md, session 22); on deep ones it waits on its tile loads, and a
copy of it making only those loads is no faster (~2.2-2.4 TB/s on an H100, where a plain stream reaches 2.9, whatever
the cells' layout, splits or pipeline stages: session 27). The loop keeps instructions few: tile loads are masked per
cell only where the head dims are powers of two, offsets are int32 from the block's first cell, the softmax runs in
base 2 with the score scale folded into the query rows (no softcap), and for one token the causal / window mask is
worked out once per cell, not per (row, cell). The loop is either software-pipelined (cp.async tiles through shared
memory, `num_stages`) or, for splits of a step or two (stages 0: STEPS), unrolled at the trip count a split has in a
full cache with its tiles loaded straight into registers: on a 128-cell cache, 4 splits of one 32-cell step take an
H100's decode step 2,233 -> 2,224 us against the same splits pipelined (8 of 16 cells: 2,212, bench/RESULTS.md,
sessions 30-31).

Operands: an f16 cache is read as f16 and f32 accumulated (a q8_0 one, `kvq8`, as its values dequantized
to f16); the f32 rows of Q and of P are rounded to one f16 operand each, as llama.cpp's CUDA flash attention
rounds them, or with EXACT split into two f16 halves (hi + lo), so the products are as accurate as f32 math
(the cache holds f16 values exactly) for twice the tensor-core work. The backend passes EXACT only in its exact
mode: one f16 operand each shortens a trip of the split loop from 482 to 425 instructions (offline sm_90 SASS,
Qwen3-8B shapes), keeps head dim 256 and the 128-cell steps out of spills (255 -> 162 and 255 -> 154 registers),
and on an H100 took tg128 437.5 -> 438.2, tg128@4096 382.7 -> 392.8, tg128@16384 315.7 -> 317.6 (bench/RESULTS.md,
session 26). An f32 cache takes f32 dots.
The readable extent is min(n_kv, S, q_pos[T-1] + 1), computed on the device, so a captured graph
stays right as the sequence grows.

With ROPE (`decode_attention(rope=...)`, the backend's `rope_qk_attention`) Pass 1 also does the
layer's Q/K per-head norms, the rope and the KV write: every program rotates its query rows, and the
program whose cells hold a new token's cell (split 0 for a cell past the extent) writes that key and
value before a barrier and its loop; no other program reads that cell. One launch fewer per layer.
"""

from __future__ import annotations

import triton
import triton.language as tl

from zinc.backends.base import Q8Cells
from zinc.backends.cuda.kernels import kvq8
from zinc.backends.cuda.kernels.elementwise import cos_sin
from zinc.backends.cuda.kernels.mmvq import q8_store
from zinc.backends.cuda.kernels.mmvs import gdc_trigger, gdc_wait_zero, pdl_options

NEG = tl.constexpr(-1.0e30)
SMEM_BUDGET = 160 * 1024  # bytes of K+V tiles in shared memory per program (stages - 1 buffers)
# the combine merges a whole head a program up to COMBINE_WHOLE split-outputs x dims, past that COMBINE_DIMS dims a
# program (H200, Qwen3-8B, fresh processes: 32 splits of 128 dims, tg128@16384 375.4 -> 379.2; 8 splits, tg128 on
# a 128-cell cache 496.2 -> 495.0, so short caches keep whole heads)
COMBINE_WHOLE, COMBINE_DIMS = 2048, 32
STAGES = 3  # software-pipeline stages of the split loop where the caller gives none (`tiles` may lower them); 0:
# no pipeline, the loop unrolled at the trip count a split has in a full cache (`attn_split_kernel` STEPS), up to
MAX_STEPS = 8  # steps (a longer loop keeps the pipeline)
CLUSTER_TRIGGER = 3  # a cluster split's trigger (`decode_attention`'s cluster), where the combine would have one
MAX_CLUSTER = 16  # splits in one thread-block cluster (`decode_attention(cluster=)`; past 8, the portable limit,
# the kernel is allowed a non-portable cluster size, which Hopper's GPCs hold up to 16)


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
    """acc + (hi + lo) @ b on tensor cores, or acc + hi @ b without EXACT (lo then unused: the compiler drops it);
    b is a tile of the cache (f16, or f32 with f32 math)."""
    if KV16:
        acc = tl.dot(hi, b, acc)
        if EXACT:
            acc = tl.dot(lo, b, acc)
    else:
        acc = tl.dot(hi, b, acc, input_precision="tf32x3")
    return acc


@triton.jit
def _rope_trig(pos, c, t, tm, mscale, NDIMS: tl.constexpr, NEOX: tl.constexpr, DP: tl.constexpr):
    """(cos, sin) * mscale of the angle pos[t] * c[i] of each dim's pair i, (len(t), DP) (t where tm)."""
    half: tl.constexpr = NDIMS // 2
    d = tl.arange(0, DP)[None, :]
    if NEOX:
        j = tl.where(d < half, d, d - half)
    else:
        j = d // 2
    th = tl.load(pos + t, mask=tm, other=0)[:, None].to(tl.float32) * tl.load(c + j, mask=d < NDIMS, other=0.0)
    cs, sn = cos_sin(th)
    return cs * mscale, sn * mscale


@triton.jit
def _rope_load(x, w, row, rm, D, NDIMS: tl.constexpr, NEOX: tl.constexpr, NORM: tl.constexpr, DP: tl.constexpr):
    """The loads of `_rope_rows`, issued before any of its math: rows `row` (BM,) of x (rows, D) where rm, each
    value's rope partner, and with NORM the norm weight at both (one memory round trip, not one after the norm's
    sum)."""
    half: tl.constexpr = NDIMS // 2
    d = tl.arange(0, DP)[None, :]
    if NEOX:
        pd = tl.where(d < half, d + half, d - half)
    else:
        pd = d ^ 1
    pd = tl.where(d < NDIMS, pd, d)
    m = rm[:, None] & (d < D)
    base = row[:, None].to(tl.int64) * D
    xs = tl.load(x + base + d, mask=m, other=0.0)
    xp = tl.load(x + base + pd, mask=m, other=0.0)
    ws = xs
    wp = xp
    if NORM:
        ws = tl.load(w + d, mask=d < D, other=0.0)
        wp = tl.load(w + pd, mask=d < D, other=0.0)
    return xs, xp, ws, wp


@triton.jit
def _rope_rows(xs, xp, ws, wp, D, eps, cs, sn, NDIMS: tl.constexpr, NEOX: tl.constexpr, NORM: tl.constexpr,
               DP: tl.constexpr):
    """`_rope_load`'s rows (BM, DP) each RMS-normed and times the weight with NORM, then their first NDIMS dims
    rotated (NEOX pairs (i, i + NDIMS/2), else (2i, 2i+1)) by `_rope_trig`'s cs, sn (broadcast to (BM, DP));
    -> (BM, DP), zero past D and where the rows were masked. The arithmetic of `elementwise._rope_heads` on
    whole rows: each value meets its pair's partner, loaded a second time."""
    half: tl.constexpr = NDIMS // 2
    d = tl.arange(0, DP)[None, :]
    if NEOX:
        first = d < half
    else:
        first = d % 2 == 0
    if NORM:
        inv = 1.0 / tl.sqrt(tl.sum(xs * xs, axis=1) / D + eps)[:, None]
        xs = xs * inv * ws
        xp = xp * inv * wp
    y = tl.where(first, xs * cs - xp * sn, xp * sn + xs * cs)
    return tl.where(d < NDIMS, y, xs)


@triton.jit
def _softmax_step(s, kp, qp, m_i, l_i, scale2, cap, window, SOFTCAP: tl.constexpr, ONE: tl.constexpr):
    """One block of scores (BM, BS): softcap, the causal / window mask from the cells' positions kp, and the
    online softmax's update in base 2 (scale2 = the score scale times log2(e); without a softcap the query rows
    already carry it) -> (new max, probabilities, rescale of the old terms, new sum). ONE: every row is the one
    token's (position qp[0]), so the mask is worked out once per cell and broadcast."""
    if SOFTCAP:
        s = cap * (2.0 / (1.0 + tl.exp(-2.0 * s / cap)) - 1.0) * scale2
    if ONE:
        q0 = tl.max(qp, axis=0)
        vis = (kp >= 0) & (kp <= q0) & ((window == 0) | (q0 - kp < window))
        s = tl.where(vis[None, :], s, float("-inf"))
    else:
        vis = (kp[None, :] >= 0) & (kp[None, :] <= qp[:, None])
        vis = vis & ((window == 0) | (qp[:, None] - kp[None, :] < window))
        s = tl.where(vis, s, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, axis=1))
    p = tl.exp2(s - m_new[:, None])
    alpha = tl.exp2(m_i - m_new)
    return m_new, p, alpha, l_i * alpha + tl.sum(p, axis=1)


@triton.jit
def _rope_kv(q, k, v, q_pos, kv_pos, qw, knew, kw, vnew, rc, slots, eps, mscale, kd, vd, head, rm, t, hk, T, S,
             start, end, n_eff, sp, D: tl.constexpr, DV: tl.constexpr, DP: tl.constexpr,
             DVP: tl.constexpr, HKV: tl.constexpr, NDIMS: tl.constexpr, NEOX: tl.constexpr, QNORM: tl.constexpr,
             KNORM: tl.constexpr, FROM_POS: tl.constexpr, ONE: tl.constexpr, Q8: tl.constexpr):
    """The split program's rope part (`attn_split_kernel` ROPE): its rotated query rows (BM, DP); the new tokens'
    keys and values written to their cells by the program whose cells hold them (split 0 those past the extent),
    which then waits at a barrier so its loop reads them back. The query's loads are issued before any math."""
    one = tl.full([1], 1, tl.int1)
    dd = tl.arange(0, DP)
    dv = tl.arange(0, DVP)
    xs, xp, ws, wp = _rope_load(q, qw, head, rm, D, NDIMS, NEOX, QNORM, DP)
    if ONE:  # one token: its angles once, shared by the rows (and its key)
        cs, sn = _rope_trig(q_pos, rc, tl.zeros([1], tl.int32), one, mscale, NDIMS, NEOX, DP)
    else:
        cs, sn = _rope_trig(q_pos, rc, t, rm, mscale, NDIMS, NEOX, DP)
    qv = _rope_rows(xs, xp, ws, wp, D, eps, cs, sn, NDIMS, NEOX, QNORM, DP)
    for tt in range(0, T):
        p = tl.load(q_pos + tt)
        if FROM_POS:
            cell = (p % S).to(tl.int64)
        else:
            cell = tl.load(slots + tt).to(tl.int64)
        if ((cell >= start) & (cell < end)) | ((sp == 0) & (cell >= n_eff)):  # sp: a cluster's too
            t1 = tt + tl.zeros([1], tl.int32)
            ks, kp2, kws, kwp = _rope_load(knew, kw, t1 * HKV + hk, one, D, NDIMS, NEOX, KNORM, DP)
            vv = tl.load(vnew + (tt * HKV + hk) * DV + dv, mask=dv < DV, other=0.0)
            if ONE:
                kcs, ksn = cs, sn
            else:
                kcs, ksn = _rope_trig(q_pos, rc, t1, one, mscale, NDIMS, NEOX, DP)
            kr = _rope_rows(ks, kp2, kws, kwp, D, eps, kcs, ksn, NDIMS, NEOX, KNORM, DP)
            ch = cell * HKV + hk
            if Q8:
                kvq8.store(tl.reshape(kr, (DP // 32, 32)), k + ch * D, kd + ch * (D // 32), D // 32, True, DP // 32)
                kvq8.store(tl.reshape(vv, (DVP // 32, 32)), v + ch * DV, vd + ch * (DV // 32), DV // 32, True,
                           DVP // 32)
            else:
                tl.store(k + ch * D + dd[None, :], kr.to(k.dtype.element_ty), mask=(dd < D)[None, :])
                tl.store(v + ch * DV + dv, vv.to(v.dtype.element_ty), mask=dv < DV)
            tl.store(kv_pos + cell, p)
    tl.debug_barrier()
    return qv


@triton.jit
def _finish(m_i, l_i, acc, head, rm, sinks, out, xq, xd, xs, HQ, BM: tl.constexpr, DV: tl.constexpr,
            DVP: tl.constexpr, HAS_SINK: tl.constexpr, QUANT: tl.constexpr, HALF: tl.constexpr = False):
    """One split (FINAL): the rows' outputs (acc over the softmax's sum, and the sink's term; m_i in base 2) stored
    to out (T, HQ, DV), with QUANT also on 8 bits (blocks of the (T, HQ * DV) rows: `mmvq.q8_store`) as the combine
    does, with HALF also in f16 to xq (T, HQ, DV)."""
    dv = tl.arange(0, DVP)
    if HAS_SINK:
        sk = tl.load(sinks + head % HQ, mask=rm, other=0.0) * 1.4426950408889634
        mx = tl.maximum(m_i, sk)
        a = tl.exp2(m_i - mx)
        w = a / (l_i * a + tl.exp2(sk - mx))
    else:
        w = 1.0 / tl.where(rm, l_i, 1.0)
    y = tl.where(rm[:, None], acc * w[:, None], 0.0)
    tl.store(out + head[:, None] * DV + dv[None, :], y, mask=rm[:, None] & (dv < DV)[None, :])
    if HALF:
        tl.store(xq + head[:, None] * DV + dv[None, :], y.to(tl.float16), mask=rm[:, None] & (dv < DV)[None, :])
    if QUANT:
        _q8_rows(y, head, 0, rm, HQ, BM, DVP // 32, DV, xq, xd, xs)


@triton.jit
def _q8_rows(y, head, b0, ok, HQ, BM: tl.constexpr, NB: tl.constexpr, DV: tl.constexpr, xq, xd, xs):
    """y (BM, NB * 32): the 8-bit blocks b0 + [0, NB) of output rows `head` (where ok), blocks of the (T, HQ * DV)
    rows (`mmvq.q8_store`), as the combine writes them."""
    b = tl.reshape(head[:, None] * (DV // 32) + b0 + tl.arange(0, NB)[None, :], (BM * NB,))
    okb = tl.reshape(tl.broadcast_to(ok[:, None], (BM, NB)), (BM * NB,))
    q8_store(tl.reshape(y, (BM * NB, 2, 4, 4)), b, 0, HQ * DV, okb, xq, xd, xs)


@triton.jit
def _row_block(pid, T, R: tl.constexpr, HKV: tl.constexpr, BM: tl.constexpr):
    """Split program pid's rows: its KV head hk, and for its BM rows i = t * R + r of that head the mask, the token
    t and the row head = t * Hq + h of the (T, Hq) query / output."""
    nrb = tl.cdiv(T * R, BM)
    hk = pid // nrb
    i = (pid % nrb) * BM + tl.arange(0, BM)
    rm = i < T * R
    t = i // R
    return hk, rm, t, (t * HKV + hk) * R + i % R


@triton.jit
def _cluster_sync_zero(x):
    """A barrier of the thread-block cluster (release / acquire at cluster scope: every CTA's stores before it are
    seen by the others' loads after it); returns 0, opaque to the compiler, for the addresses of those loads."""
    return tl.inline_asm_elementwise("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;"
                                     "\nmov.u32 $0, 0;", "=r,r", [x], dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def _merge_dims(m_in, l_in, o_in, head, rm, c, sinks, out, xq, xd, xs, HQ, NSPLIT, NSP: tl.constexpr,
                BM: tl.constexpr, DV: tl.constexpr, DC: tl.constexpr, HAS_SINK: tl.constexpr, QUANT: tl.constexpr):
    """Dims c * DC + [0, DC) of the BM rows `head` (rm) merged from the NSPLIT splits' max, sum and output rows
    (row head * NSPLIT + split), as `attn_combine_kernel` merges them; stored to out (and on 8 bits with QUANT, DC a
    multiple of 32: blocks of the (T, HQ * DV) rows as `_finish` writes them). A cluster split's epilogue."""
    sp = tl.arange(0, NSP)
    dv = c * DC + tl.arange(0, DC)
    ok = rm & (c * DC < DV)
    sm = ok[:, None] & (sp < NSPLIT)[None, :]
    row = head[:, None] * NSPLIT + sp[None, :]  # (BM, NSP)
    m = tl.load(m_in + row, mask=sm, other=NEG)
    mx = tl.max(m, axis=1)
    if HAS_SINK:
        sk = tl.load(sinks + head % HQ, mask=ok, other=0.0)
        mx = tl.maximum(mx, sk)
    w = tl.exp(m - mx[:, None])
    z = tl.sum(tl.load(l_in + row, mask=sm, other=0.0) * w, axis=1)
    if HAS_SINK:
        z = z + tl.exp(sk - mx)
    dm = dv < DV
    o = tl.load(o_in + row[:, :, None] * DV + dv[None, None, :], mask=sm[:, :, None] & dm[None, None, :], other=0.0)
    y = tl.sum(o * w[:, :, None], axis=1) / tl.where(ok, z, 1.0)[:, None]  # (BM, DC)
    tl.store(out + head[:, None] * DV + dv[None, :], y, mask=ok[:, None] & dm[None, :])
    if QUANT:
        _q8_rows(y, head, c * (DC // 32), ok, HQ, BM, DC // 32, DV, xq, xd, xs)


@triton.jit
def merge_kernel(m_in, l_in, o_in, sinks, out, xq, xd, xs, T, HQ, NSPLIT, R: tl.constexpr, HKV: tl.constexpr,
                 BM: tl.constexpr, NSP: tl.constexpr, DV: tl.constexpr, DC: tl.constexpr, HAS_SINK: tl.constexpr,
                 QUANT: tl.constexpr):
    """`_merge_dims` for the rows and dims of split program (program_id(0), program_id(1)) of `attn_split_kernel`
    after every split has written its partials: what a cluster split does after its barrier (tests, and the
    interpreter, where no cluster runs)."""
    _, rm, _, head = _row_block(tl.program_id(0), T, R, HKV, BM)
    _merge_dims(m_in, l_in, o_in, head, rm, tl.program_id(1), sinks, out, xq, xd, xs, HQ, NSPLIT, NSP, BM, DV, DC,
                HAS_SINK, QUANT)


@triton.jit
def _tiles(k, v, kd, vd, kv_pos, s0, end, hk, HKV: tl.constexpr, D: tl.constexpr, DV: tl.constexpr,
           DP: tl.constexpr, DVP: tl.constexpr, BS: tl.constexpr, Q8: tl.constexpr, EVEN: tl.constexpr):
    """The K tile (DP, BS) and V tile (BS, DVP) of cells s0 + [0, BS) (those past `end` read as 0) and their
    positions (-1 past end), offset from the block's first cell in int32; EVEN (D = DP, DV = DVP): masks per
    cell only."""
    c = tl.arange(0, BS)
    cm = s0 + c < end
    dd = tl.arange(0, DP)
    dv = tl.arange(0, DVP)
    first = hk.to(tl.int64) + s0 * HKV  # int64: caches of billions of values
    if Q8:
        ch = (c * HKV).to(tl.int64) + first
        kt = kvq8.load_cols(k, kd, ch, cm, D, DP // 32, tl.float16)
        vt = kvq8.load_rows(v, vd, ch, cm, DV, DVP // 32, tl.float16)
    else:
        km = cm[None, :]
        vm = cm[:, None]
        if not EVEN:
            km = km & (dd < D)[:, None]
            vm = vm & (dv < DV)[None, :]
        kt = tl.load(k + first * D + (c * (HKV * D))[None, :] + dd[:, None], mask=km, other=0.0)
        vt = tl.load(v + first * DV + (c * (HKV * DV))[:, None] + dv[None, :], mask=vm, other=0.0)
    kp = tl.load(kv_pos + s0 + c, mask=cm, other=-1)
    return kt, vt, kp


@triton.jit
def _attend(k, v, kd, vd, kv_pos, s0, end, hk, qh, ql, qp, m_i, l_i, acc, scale2, cap, window, HKV: tl.constexpr,
            D: tl.constexpr, DV: tl.constexpr, DP: tl.constexpr, DVP: tl.constexpr, BM: tl.constexpr,
            BS: tl.constexpr, Q8: tl.constexpr, SOFTCAP: tl.constexpr, KV16: tl.constexpr, EXACT: tl.constexpr,
            ONE: tl.constexpr):
    """One step of the split loop: cells s0 + [0, BS) (those past `end` masked) into the online softmax's max,
    sum and output rows."""
    kt, vt, kp = _tiles(k, v, kd, vd, kv_pos, s0, end, hk, HKV, D, DV, DP, DVP, BS, Q8, D == DP and DV == DVP)
    s = _mma(qh, ql, kt, tl.zeros([BM, BS], tl.float32), KV16, EXACT)  # (BM, BS)
    m_new, p, alpha, l_i = _softmax_step(s, kp, qp, m_i, l_i, scale2, cap, window, SOFTCAP, ONE)
    ph, pl = _operand(p, KV16)
    return m_new, l_i, _mma(ph, pl, vt, acc * alpha[:, None], KV16, EXACT)


@triton.jit
def attn_split_kernel(q, k, v, q_pos, kv_pos, m_out, l_out, o_out, T, S, n_kv, scale, cap, window, NSPLIT,
                      qw, knew, kw, vnew, rc, slots, eps, mscale, kd, vd, sinks, out, xq, xd, xs, HQ,
                      R: tl.constexpr, D: tl.constexpr, DV: tl.constexpr, DP: tl.constexpr,
                      DVP: tl.constexpr, HKV: tl.constexpr, BM: tl.constexpr,
                      BS: tl.constexpr, SOFTCAP: tl.constexpr, KV16: tl.constexpr, EXACT: tl.constexpr,
                      ROPE: tl.constexpr = False, NDIMS: tl.constexpr = 0, NEOX: tl.constexpr = False,
                      QNORM: tl.constexpr = False, KNORM: tl.constexpr = False, FROM_POS: tl.constexpr = False,
                      ONE: tl.constexpr = False, Q8: tl.constexpr = False, FINAL: tl.constexpr = False,
                      HAS_SINK: tl.constexpr = False, QUANT: tl.constexpr = False, PDL: tl.constexpr = 0,
                      TRIG: tl.constexpr = 0, STEPS: tl.constexpr = 0, CLUSTER: tl.constexpr = 0,
                      CDC: tl.constexpr = 32):
    pid = tl.program_id(0)
    sp = tl.program_id(1)
    if CLUSTER:  # a cluster is the NSPLIT splits of one row block, consecutive along the grid's x
        sp = pid % NSPLIT
        pid = pid // NSPLIT
    if TRIG == 1:  # a programmatic dependent launch (`mmvs.pdl_options`): the next launch may start now
        gdc_trigger(pid)
    if PDL:  # launched early: wait before any load (every address below takes the wait's 0)
        z = gdc_wait_zero(pid)
        pid += z
        sp += z
        T += z
    hk, rm, t, head = _row_block(pid, T, R, HKV, BM)
    qp = tl.load(q_pos + t, mask=rm, other=-1)
    n_eff = tl.minimum(tl.minimum(n_kv, S), tl.load(q_pos + T - 1) + 1)
    chunk = tl.cdiv(tl.cdiv(n_eff, NSPLIT), BS) * BS
    start = sp * chunk
    end = tl.minimum(start + chunk, n_eff)
    dd = tl.arange(0, DP)
    dv = tl.arange(0, DVP)
    if ROPE:
        qv = _rope_kv(q, k, v, q_pos, kv_pos, qw, knew, kw, vnew, rc, slots, eps, mscale, kd, vd, head, rm, t, hk, T,
                      S, start, end, n_eff, sp, D, DV, DP, DVP, HKV, NDIMS, NEOX, QNORM, KNORM, FROM_POS, ONE, Q8)
    else:
        qv = tl.load(q + head[:, None] * D + dd[None, :], mask=rm[:, None] & (dd < D)[None, :], other=0.0)
    scale2 = scale * 1.4426950408889634  # scores in base 2
    if not SOFTCAP:
        qv = qv * scale2
    qh, ql = _operand(qv, KV16)
    m_i = tl.full([BM], NEG, tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, DVP], tl.float32)
    if STEPS:  # a trip count fixed by the cache size, unrolled: each step's loads go straight to registers
        for j in tl.static_range(STEPS):
            m_i, l_i, acc = _attend(k, v, kd, vd, kv_pos, start + j * BS, end, hk, qh, ql, qp, m_i, l_i, acc, scale2,
                                    cap, window, HKV, D, DV, DP, DVP, BM, BS, Q8, SOFTCAP, KV16, EXACT, ONE)
    else:
        for s0 in range(start, end, BS):
            m_i, l_i, acc = _attend(k, v, kd, vd, kv_pos, s0, end, hk, qh, ql, qp, m_i, l_i, acc, scale2, cap, window,
                                    HKV, D, DV, DP, DVP, BM, BS, Q8, SOFTCAP, KV16, EXACT, ONE)
    if TRIG == 3:  # the next launch may start once the loop is done (before the output or the cluster's merge)
        gdc_trigger(pid)
    if FINAL:
        _finish(m_i, l_i, acc, head, rm, sinks, out, xq, xd, xs, HQ, BM, DV, DVP, HAS_SINK, QUANT)
    else:
        row = head * NSPLIT + sp
        tl.store(m_out + row, m_i * 0.6931471805599453, mask=rm)  # natural-log units for the combine
        tl.store(l_out + row, l_i, mask=rm)
        tl.store(o_out + row[:, None] * DV + dv[None, :], acc, mask=rm[:, None] & (dv < DV)[None, :])
        if CLUSTER:  # launched as clusters of the NSPLIT splits (`decode_attention`): they merge in place
            z = _cluster_sync_zero(pid)
            _merge_dims(m_out, l_out, o_out, head + z, rm, sp, sinks, out, xq, xd, xs, HQ, NSPLIT, CLUSTER, BM, DV,
                        CDC, HAS_SINK, QUANT)
    if TRIG == 2:
        gdc_trigger(pid)


@triton.jit
def attn_combine_kernel(m_in, l_in, o_in, sinks, out, xq, xd, xs, HQ, NSPLIT: tl.constexpr, NSP: tl.constexpr,
                        DV: tl.constexpr, DC: tl.constexpr, HAS_SINK: tl.constexpr, CH: tl.constexpr,
                        QUANT: tl.constexpr, PDL: tl.constexpr = 0, TRIG: tl.constexpr = 0,
                        HALF: tl.constexpr = False):
    """Dims c * DC + [0, DC) of one output row (grid (T * HQ, cdiv(DV, DC))): the max over the NSP (>= NSPLIT)
    splits' maxima, then their outputs CH at a time. With QUANT (DC a multiple of 32 dividing DV) those dims are
    also written on 8 bits for the output projection's matvec: their blocks of the (T, HQ * DV) activation row t
    (`mmvq.q8_store`); with HALF in f16 to xq (T, HQ, DV) for its tile GEMM."""
    row = tl.program_id(0)  # t * HQ + h
    c = tl.program_id(1)
    if TRIG == 1:  # as the split kernel's
        gdc_trigger(row)
    if PDL:
        z = gdc_wait_zero(row)
        row += z
        c += z
    sp = tl.arange(0, NSP)
    sm = sp < NSPLIT
    dv = c * DC + tl.arange(0, DC)
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
    y = tl.zeros([DC], tl.float32)
    for c0 in tl.static_range(0, NSP, CH):
        spc = c0 + tl.arange(0, CH)
        cm = spc < NSPLIT
        w = tl.exp(tl.load(m_in + row * NSPLIT + spc, mask=cm, other=NEG) - mx)
        o = tl.load(o_in + (row * NSPLIT + spc)[:, None] * DV + dv[None, :], mask=cm[:, None] & dm[None, :],
                    other=0.0)
        y += tl.sum(o * w[:, None], axis=0)
    y = y / z
    tl.store(out + row * DV + dv, y, mask=dm)
    if HALF:
        tl.store(xq + row * DV + dv, y.to(tl.float16), mask=dm)
    if QUANT:
        b = (row % HQ) * (DV // 32) + c * (DC // 32) + tl.arange(0, DC // 32)
        q8_store(tl.reshape(y, (DC // 32, 2, 4, 4)), b, row // HQ, HQ * DV, b >= 0, xq, xd, xs)
    if TRIG == 2:
        gdc_trigger(row)


def _launch_clusters(kernel, grid: tuple, args: tuple, kw: dict) -> None:
    """kernel over grid (P, S) as P clusters of S CTAs along x (the kernel's CLUSTER layout: CTA x = P * S + split).
    Triton launches clusters only for its multi-CTA programs (num_ctas > 1, which lay one program's tensors over
    several CTAs): the kernel is compiled as usual (one CTA a program), then its packed launch metadata names S CTAs
    a program, for which Triton's launcher multiplies the grid's x by S and launches clusters of S along x (Triton
    3.6; 3.5 takes the cluster's dimensions from the metadata too), so it is given (P, 1)."""
    compiled = kernel.warmup(*args, grid=(grid[0] * grid[1], 1), **kw)
    compiled = compiled.result() if hasattr(compiled, "result") else compiled  # an asynchronous compile's
    meta = compiled.packed_metadata
    if grid[1] > 8:  # a non-portable cluster size: allowed on the kernel (its module loaded for the handle)
        from zinc.backends.cuda.graph import DriverGraph

        compiled._init_handles()
        DriverGraph.check(DriverGraph.driver().cuFuncSetAttribute(compiled.function, 14, 1),
                          "cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED)")
    # set at every launch: splits of 3 and 4 (one CLUSTER constexpr, 4) share the compiled kernel
    compiled.packed_metadata = (meta[0], grid[1], meta[2]) + ((grid[1], 1, 1) if len(meta) == 6 else ())
    kernel[(grid[0], 1)](*args, **kw)


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
                     stages: int = STAGES, exact: bool = True, q8=None, rope=None, combine_dims: int = 0,
                     pdl: tuple = ((0, 0), (0, 0)), cluster: int = 0) -> None:
    """q (T, Hq, D) f32; k (S, Hkv, D), v (S, Hkv, DV) f16/f32 (or `Q8Cells`); out (T, Hq, DV) f32;
    scratch: (m, l, o) of T * Hq * nsplit rows. bs, stages, warps: see `tiles` (stages 0: the split loop unrolled,
    no pipeline, up to MAX_STEPS steps). q8: (xq, xd, xs) of `mmvq.q8_buffers(T, Hq * DV)` to also get the output
    on 8 bits (DV a power of two >= 32). combine_dims: the
    output dims a combine program merges (a multiple of 32 dividing DV, or DV's power of two), instead of the rule
    of COMBINE_WHOLE.

    rope = (q_norm, k_new, k_norm, v_new, c, slots, eps, mscale, n_dims, neox, from_pos): q is not yet
    rotated and the layer's new keys and values are not yet in the cache; the split programs do what
    `elementwise.rope_qk` does (per-head norms when the weights are given, rope with angles q_pos * c,
    k_new (T, Hkv, D) rotated and v_new (T, Hkv, DV) into the cells slots, or q_pos % S with from_pos)
    before they attend: one launch fewer per layer.

    pdl: the (wait, trigger) of the split and of the combine launch as programmatic dependent launches
    (`mmvs.pdl_options`; a program launched early waits before any load; the split's trigger 3: after its loop).

    cluster: where nsplit is at most this (and MAX_CLUSTER), the splits of a row block run as one thread-block
    cluster and, after a cluster barrier, each merges CDC dims of the block's rows (`_merge_dims`): no combine
    launch; the split then takes the combine's trigger, as CLUSTER_TRIGGER (3: after its loop, so the next launch may
    start during the merge). In the interpreter (no clusters) `merge_kernel` does the same merge after the split
    launch."""
    t, hq, d = q.shape
    s, hkv, dv = v.shape
    r = hq // hkv
    m, l, o = scratch
    q8c = isinstance(k, Q8Cells)  # q8_0 cells: dequantized to f16 operands as they are read
    (k, kd), (v, vd) = kvq8.planes(k), kvq8.planes(v)
    unroll = stages == 0  # the pipeline's stages still fitted by `tiles`, for a loop too long to unroll
    bm, bs, stages, warps = tiles(t * r, d, dv, bs, stages or STAGES, warps, 2 if q8c else k.element_size())
    steps = triton.cdiv(triton.cdiv(s, nsplit), bs) if unroll else 0
    if steps > MAX_STEPS:
        steps = 0
    dp, dvp = max(16, triton.next_power_of_2(d)), max(16, triton.next_power_of_2(dv))
    if rope is not None:
        qw, kn, kw, vn, c, slots, eps, mscale, n_dims, neox, from_pos = rope
        extra = (q if qw is None else qw, kn, kn if kw is None else kw, vn, c, q_pos if slots is None else slots,
                 eps, mscale)
        meta = dict(ROPE=True, NDIMS=n_dims, NEOX=neox, QNORM=qw is not None, KNORM=kw is not None,
                    FROM_POS=from_pos, ONE=t == 1)
    else:
        extra, meta = (q, q, q, q, q, q_pos, 0.0, 1.0), {}
    final = nsplit == 1  # one split: it writes the output itself, no combine launch
    xq, xd, xs = q8 if q8 is not None else (m, m, m)
    snk = sinks if sinks is not None else m
    grid = (hkv * triton.cdiv(t * r, bm), nsplit)
    clustered = not final and nsplit <= min(cluster, MAX_CLUSTER)
    # a cluster split ends the attention: it takes the combine's trigger
    split_pdl = (pdl[0][0], CLUSTER_TRIGGER if pdl[1][1] else pdl[0][1]) if clustered else pdl[0]
    args = (q, k, v, q_pos, kv_pos, m, l, o, t, s, n_kv, scale, cap if cap else 1.0, window, nsplit, *extra, kd, vd,
            snk, out, xq, xd, xs, hq)
    kw = dict(R=r, D=d, DV=dv, DP=dp, DVP=dvp, HKV=hkv, BM=bm, BS=bs, SOFTCAP=bool(cap),
              KV16=q8c or k.element_size() == 2, EXACT=exact, Q8=q8c, FINAL=final, HAS_SINK=sinks is not None,
              QUANT=q8 is not None, num_warps=warps, num_stages=1 if steps else stages, STEPS=steps, **meta,
              **pdl_options(split_pdl, q))
    nsp = max(2, triton.next_power_of_2(nsplit))
    if clustered:
        cdc = max(32, triton.next_power_of_2(triton.cdiv(dvp, nsplit)))  # dims a split merges: DV within the splits
        if q.is_cuda:
            _launch_clusters(attn_split_kernel, grid, args, dict(kw, CLUSTER=nsp, CDC=cdc))
        else:
            attn_split_kernel[grid](*args, **kw)
            merge_kernel[grid](m, l, o, snk, out, xq, xd, xs, t, hq, nsplit, R=r, HKV=hkv, BM=bm, NSP=nsp, DV=dv,
                               DC=cdc, HAS_SINK=sinks is not None, QUANT=q8 is not None)
        return
    attn_split_kernel[grid](*args, **kw)
    if final:
        return
    dvp = triton.next_power_of_2(dv)
    dc = combine_dims or (COMBINE_DIMS if dv % COMBINE_DIMS == 0 and nsp * dvp > COMBINE_WHOLE else dvp)
    attn_combine_kernel[(t * hq, triton.cdiv(dv, dc))](
        m, l, o, snk, out, xq, xd, xs, hq, NSPLIT=nsplit, NSP=nsp, DV=dv, DC=dc,
        HAS_SINK=sinks is not None, CH=min(nsp, max(2, 4096 // dc)), QUANT=q8 is not None,
        num_warps=4 if nsp * dc >= 4096 else 1, **pdl_options(pdl[1], q))
