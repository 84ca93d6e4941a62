"""Mixture-of-experts row kernels: the router's top-k with its gating, and the weighted sum of the experts.

`router_kernel` does in one launch what `zinc.backends.cpu.ops.CpuOps.router_topk` does in NumPy:
gate probabilities (softmax, sigmoid or the raw logits), the k largest in descending order with ties
to the lower expert id (a stable descending sort), their weights (a softmax over the k for
"softmax_weight"), the optional renormalisation and scale. `weighted_sum_kernel` sums the k expert
outputs of a token times their weights, in selection order (plus a shared expert behind its sigmoid gate).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from zinc.backends.cuda.kernels.elementwise import glu_act
from zinc.backends.cuda.kernels.quant import sub64

GATINGS = {"softmax": 0, "sigmoid": 1, "softmax_weight": 2}
SUM_BLOCK = 1024  # values a program of `split_sum_kernel`


@triton.jit
def router_kernel(logits, ids, w, sg, E, K, w_scale, GATING: tl.constexpr, NORM: tl.constexpr, BE: tl.constexpr,
                  BK: tl.constexpr, SHARED: tl.constexpr = False):
    """Row t of logits (T, E) -> ids[t] (K,) int32, w[t] (K,) f32; grid (T,). GATING 0 softmax,
    1 sigmoid, 2 softmax_weight (probabilities are the logits, the weights a softmax of the K).
    SHARED: rows of K + 1, slot K the folded shared expert E with weight sigmoid(sg[t])."""
    t = tl.program_id(0).to(tl.int64)
    e = tl.arange(0, BE)
    em = e < E
    x = tl.load(logits + t * E + e, mask=em, other=float("-inf")).to(tl.float32)
    if GATING == 0:
        ex = tl.where(em, tl.exp(x - tl.max(x, axis=0)), 0.0)
        p = ex * (1.0 / tl.sum(ex, axis=0))
    elif GATING == 1:
        p = 1.0 / (1.0 + tl.exp(-x))
    else:
        p = x
    kk = tl.arange(0, BK)
    taken = e >= E  # padding is never chosen
    sel = tl.zeros([BK], dtype=tl.int32)
    wv = tl.zeros([BK], dtype=tl.float32)
    for j in range(K):  # the largest left, the lowest id among equals
        avail = tl.where(taken, float("-inf"), p)
        m = tl.max(avail, axis=0)
        idx = tl.min(tl.where((avail == m) & ~taken, e, BE), axis=0)
        sel = tl.where(kk == j, idx, sel)
        wv = tl.where(kk == j, m, wv)
        taken = taken | (e == idx)
    km = kk < K
    if GATING == 2:
        ew = tl.where(km, tl.exp(wv - tl.max(tl.where(km, wv, float("-inf")), axis=0)), 0.0)
        wv = ew / tl.sum(ew, axis=0)
    if NORM:
        wv = wv / tl.maximum(tl.sum(tl.where(km, wv, 0.0), axis=0), 6.103515625e-5)  # floor of the sum
    wv = wv * w_scale
    ko = K + 1 if SHARED else K
    tl.store(ids + t * ko + kk, sel, mask=km)
    tl.store(w + t * ko + kk, wv, mask=km)
    if SHARED:
        tl.store(ids + t * ko + K, E)
        tl.store(w + t * ko + K, 1.0 / (1.0 + tl.exp(-tl.load(sg + t))))


def router_topk(logits: torch.Tensor, k: int, gating: str, norm_w: bool, w_scale: float,
                shared_gate: torch.Tensor | None = None):
    """logits (T, E) -> (ids (T, k) int32, weights (T, k) f32); see CpuOps.router_topk. With shared_gate
    (T, 1): (T, k + 1), slot k expert E with weight sigmoid(shared_gate) (`Ops.router_topk_shared`)."""
    if gating not in GATINGS:
        raise ValueError(f"unknown expert gating {gating!r}")
    logits = logits.float().contiguous()
    T, E = logits.shape
    ko = k + (shared_gate is not None)
    ids = torch.empty((T, ko), dtype=torch.int32, device=logits.device)
    w = torch.empty((T, ko), dtype=torch.float32, device=logits.device)
    sg = shared_gate.float().contiguous() if shared_gate is not None else w
    scale = float(w_scale) if w_scale and w_scale != 1.0 else 1.0
    be = triton.next_power_of_2(E)
    router_kernel[(T,)](logits, ids, w, sg, E, k, scale, GATING=GATINGS[gating], NORM=bool(norm_w), BE=be,
                        BK=triton.next_power_of_2(k), SHARED=shared_gate is not None, num_warps=4 if be >= 1024 else 1)
    return ids, w


@triton.jit
def weighted_sum_kernel(x, w, sh, g, out, K, D, BD: tl.constexpr, SHARED: tl.constexpr, GATED: tl.constexpr):
    """out[t, d] = sum_j x[t, j, d] * w[t, j] (j in order) for x (T, K, D), w (T, K); grid (T, cdiv(D, BD)).
    SHARED: + sh[t, d] (a shared expert's output), times sigmoid(g[t]) with GATED."""
    t = tl.program_id(0).to(tl.int64)
    d = tl.program_id(1) * BD + tl.arange(0, BD)
    dm = d < D
    acc = tl.load(x + t * K * D + d, mask=dm, other=0.0) * tl.load(w + t * K)
    for j in range(1, K):
        acc = acc + tl.load(x + (t * K + j) * D + d, mask=dm, other=0.0) * tl.load(w + t * K + j)
    if SHARED:
        s = tl.load(sh + t * D + d, mask=dm, other=0.0)
        if GATED:
            s = s * (1.0 / (1.0 + tl.exp(-tl.load(g + t))))
        acc = acc + s
    tl.store(out + t * D + d, acc, mask=dm)


def weighted_sum(x: torch.Tensor, w: torch.Tensor, shared: torch.Tensor | None = None,
                 gate: torch.Tensor | None = None) -> torch.Tensor:
    """(T, k, D), (T, k) -> (T, D); plus shared (T, D) times sigmoid(gate (T, 1)) when given."""
    x, w = x.float().contiguous(), w.float().contiguous()
    T, K, D = x.shape
    out = torch.empty((T, D), dtype=torch.float32, device=x.device)
    sh = shared.float().contiguous() if shared is not None else out
    g = gate.float().contiguous() if gate is not None else out
    bd = min(256, triton.next_power_of_2(D))
    weighted_sum_kernel[(T, triton.cdiv(D, bd))](x, w, sh, g, out, K, D, BD=bd, SHARED=shared is not None,
                                                 GATED=gate is not None, num_warps=2)
    return out


@triton.jit
def _mma(wt, xa, acc, SWAP: tl.constexpr):
    """acc + one step's products of a weight tile wt (BN, 64) and x tile xa (BM, 64): (BN, BM) with SWAP (the weight
    the dot's first operand), else (BM, BN)."""
    if SWAP:
        acc = tl.dot(wt, tl.trans(xa), acc)
    else:
        acc = tl.dot(xa, tl.trans(wt), acc)
    return acc


@triton.jit
def experts_gemm_kernel(x, pairs, block_e, a, b, c, d, a2, b2, c2, d2, out, N, K, NSEL, sx, KS, so, fin, sems,
                        out16, QT: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, PER_TOKEN: tl.constexpr,
                        GLU: tl.constexpr, ACT: tl.constexpr, SWAP: tl.constexpr, SERIAL: tl.constexpr = 0,
                        ASM: tl.constexpr = 0, HALF: tl.constexpr = False):
    """Grouped expert GEMM, one launch for every expert hit: program (m, n) takes the BM (token, slot) pairs
    pairs[m * BM ...] (-1: padding) that all chose expert block_e[m] (-1: an unused block) and computes columns
    n * BN ... of their x @ W_e^T (x row: the pair's token with PER_TOKEN, else the pair itself), each of the
    expert's weight tiles dequantized once (`quant.sub64`: Q4_K, Q6_K, Q8_0, MXFP4; f16 operands, f32
    accumulation). GLU: a second weight (a2..d2) of the same type and shape, out = act(x W^T) * (x W2^T).
    out (pairs, N) f32, row = pair id. SWAP: the products as W x^T (the weight tile the dot's first operand), out
    stored transposed. Split K: program (m, n, s) sums columns s * KS ... (s + 1) * KS - 1 of K (KS a multiple of 64
    that divides K) into out + s * so (one (pairs, N) slice a split, summed after; without splits KS >= K, one slice).
    SERIAL (the SERIAL splits of K): the last split of a tile to finish sums the tile's slices in split order into fin
    (pairs, N), counted on sems[tile] (int32, zero before, zero again after: no launch to clear or sum them); with GLU
    the up products' slices follow the gate's (out + (SERIAL + s) * so), the activation applied to the sums.
    HALF: the final products (one split's, or the SERIAL sums) also stored in f16 to out16 (pairs, N).
    (Session 43, H100: each step's weight bytes loaded one or two steps ahead in registers lost at 64 rows, zinc bench
    tg64 of 64 sequences 4,258 -> 3,160 / 2,846 tok/s, bench/RESULTS.md.)"""
    pm = tl.program_id(0)
    e = tl.load(block_e + pm)
    if e < 0:
        return
    p = tl.load(pairs + pm * BM + tl.arange(0, BM))
    pmask = p >= 0
    pc = tl.where(pmask, p, 0)
    if PER_TOKEN:
        xr = (pc // NSEL).to(tl.int64)
    else:
        xr = pc.to(tl.int64)
    n = tl.program_id(1) * BN + tl.arange(0, BN)
    nm = n < N
    r = (e * N + tl.where(nm, n, 0)).to(tl.int64)
    if SWAP:
        acc = tl.zeros([BN, BM], tl.float32)
        acc2 = tl.zeros([BN, BM], tl.float32)
    else:
        acc = tl.zeros([BM, BN], tl.float32)
        acc2 = tl.zeros([BM, BN], tl.float32)
    k_lo = tl.program_id(2) * KS
    part = out + tl.program_id(2).to(tl.int64) * so
    for k0 in range(k_lo, k_lo + KS, 64):
        kk = k0 + tl.arange(0, 64)
        xa = tl.load(x + xr[:, None] * sx + kk[None, :], mask=pmask[:, None] & (kk < K)[None, :], other=0.0)
        xa = xa.to(tl.float16)
        acc = _mma(sub64(a, b, c, d, r, k0, K, QT, ASM).to(tl.float16), xa, acc, SWAP)
        if GLU:
            acc2 = _mma(sub64(a2, b2, c2, d2, r, k0, K, QT, ASM).to(tl.float16), xa, acc2, SWAP)
    if GLU and not SERIAL:
        acc = glu_act(acc, acc2, ACT)
    # (HALF: a tile GEMM's <= 128 rows; int32 offsets, the Q4_K GLU's unswapped form 102 -> 85 registers, sm_90)
    orow = pc if HALF else pc.to(tl.int64)
    if SWAP:
        off = orow[None, :] * N + n[:, None]
        om = pmask[None, :] & nm[:, None]
    else:
        off = orow[:, None] * N + n[None, :]
        om = pmask[:, None] & nm[None, :]
    tl.store(part + off, acc, mask=om)
    if HALF and not SERIAL and KS >= K:  # (after the f32 store: before it, the Q4_K GLU swapped took 168, not 152)
        tl.store(out16 + off, acc.to(tl.float16), mask=om)
    if GLU and SERIAL:  # the up products' slices after the gate's
        tl.store(part + SERIAL * so + off, acc2, mask=om)
    if SERIAL:  # the slices' stores before the count (release), the last split's loads after it (acquire)
        tile = pm * tl.num_programs(1) + tl.program_id(1)
        tl.debug_barrier()
        if tl.atomic_add(sems + tile, 1, sem="acq_rel") == SERIAL - 1:
            total = tl.load(out + off, mask=om, other=0.0, cache_modifier=".cg")
            for s in range(1, SERIAL):
                total += tl.load(out + s * so + off, mask=om, other=0.0, cache_modifier=".cg")
            if GLU:
                up = tl.load(out + SERIAL * so + off, mask=om, other=0.0, cache_modifier=".cg")
                for s in range(SERIAL + 1, 2 * SERIAL):
                    up += tl.load(out + s * so + off, mask=om, other=0.0, cache_modifier=".cg")
                total = glu_act(total, up, ACT)
            if HALF:  # (before the f32 store: after it the Q4_K GLU took 172 registers, not 150: 2 programs an SM)
                tl.store(out16 + off, total.to(tl.float16), mask=om)
            tl.store(fin + off, total, mask=om)
            tl.atomic_xchg(sems + tile, 0)


@triton.jit
def split_sum_kernel(parts, out, out16, M, S: tl.constexpr, BLOCK: tl.constexpr, HALF: tl.constexpr):
    """out[i] = parts[0, i] + parts[1, i] + ... + parts[S - 1, i], added in that order, for parts (S, M) f32; HALF:
    also stored in f16 to out16; grid (cdiv(M, BLOCK),)."""
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < M
    acc = tl.load(parts + i, mask=m, other=0.0)
    for s in tl.static_range(1, S):
        acc += tl.load(parts + s * M + i, mask=m, other=0.0)
    tl.store(out + i, acc, mask=m)
    if HALF:
        tl.store(out16 + i, acc.to(tl.float16), mask=m)


def split_sum(parts: torch.Tensor, out16: torch.Tensor | None = None) -> torch.Tensor:
    """The sum over the first dim of parts (S, ...) f32 contiguous, the slices added in order (`split_sum_kernel`:
    one read of the slices, where torch's sum over dim 0 took 5.4 us a launch for a 64-sequence Qwen3-8B step's
    slices, 684 us a step, H100 session 45); out16: the sum in f16 too."""
    m = parts[0].numel()
    out = torch.empty(parts.shape[1:], dtype=torch.float32, device=parts.device)
    split_sum_kernel[(triton.cdiv(m, SUM_BLOCK),)](parts, out, out16 if out16 is not None else out, m,
                                                   S=parts.shape[0], BLOCK=SUM_BLOCK, HALF=out16 is not None,
                                                   num_warps=4)
    return out


@triton.jit
def align_kernel(ids, slots, rank, pairs, block_e, P, E, NB, BM: tl.constexpr, BP: tl.constexpr, BE: tl.constexpr,
                 BB: tl.constexpr):
    """One program: the P pairs of ids grouped by expert for `experts_gemm_kernel` (see `align_pairs`); slots and
    rank (E,) int32 zeroed. Counts by atomics, each expert's first slot from the cumulated block counts, every pair
    to its expert's next slot (their order within an expert does not change any result: each output row is its
    own pair's). The atomics are relaxed (no fence each): the barriers order them within the program."""
    for p0 in range(0, P, BP):
        p = p0 + tl.arange(0, BP)
        tl.atomic_add(slots + tl.load(ids + p, mask=p < P, other=0), 1, mask=p < P, sem="relaxed")
    tl.debug_barrier()
    e = tl.arange(0, BE)
    em = e < E
    nblk = (tl.load(slots + e, mask=em, other=0, volatile=True) + BM - 1) // BM
    bend = tl.cumsum(nblk, 0)
    tl.debug_barrier()
    tl.store(slots + e, (bend - nblk) * BM, mask=em)
    for b0 in range(0, NB, BB):
        b = b0 + tl.arange(0, BB)
        ex = tl.sum(((bend[None, :] <= b[:, None]) & em[None, :]).to(tl.int32), axis=1)
        tl.store(block_e + b, tl.where(ex < E, ex, -1), mask=b < NB)
    for q0 in range(0, NB * BM, BP):
        q = q0 + tl.arange(0, BP)
        tl.store(pairs + q, tl.full([BP], -1, tl.int32), mask=q < NB * BM)
    tl.debug_barrier()
    for p0 in range(0, P, BP):
        p = p0 + tl.arange(0, BP)
        pm = p < P
        ex = tl.load(ids + p, mask=pm, other=0)
        r = tl.atomic_add(rank + ex, 1, mask=pm, sem="relaxed")
        tl.store(pairs + tl.load(slots + ex, mask=pm, other=0, volatile=True) + r, p, mask=pm)


def align_pairs(ids: torch.Tensor, n_experts: int, bm: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The (token, slot) pairs of ids (T, k) grouped by expert for `experts_gemm_kernel`, on the device (no host
    sync, two launches): pair ids (blocks * bm,) int32, each expert's run padded with -1 to whole blocks of bm, and
    each block's expert (blocks,) int32 (-1 past the last); blocks = cdiv(T k, bm) + min(E, T k) bounds those
    needed."""
    n_pairs = ids.numel()
    blocks = triton.cdiv(n_pairs, bm) + min(n_experts, n_pairs)
    work = torch.zeros(2 * n_experts, dtype=torch.int32, device=ids.device)
    pairs = torch.empty(blocks * bm, dtype=torch.int32, device=ids.device)
    block_e = torch.empty(blocks, dtype=torch.int32, device=ids.device)
    align_kernel[(1,)](ids.contiguous(), work, work[n_experts:], pairs, block_e, n_pairs, n_experts, blocks, BM=bm,
                       BP=1024, BE=triton.next_power_of_2(n_experts), BB=max(1, 8192 // triton.next_power_of_2(n_experts)),
                       num_warps=8)
    return pairs, block_e


@triton.jit
def order_kernel(ids, out, P, BP: tl.constexpr, BJ: tl.constexpr):
    """Pairs i of program_id(0)'s BP: out[i] = ids[i] and out[P + rank] = i, rank = the pairs of a lower expert or of
    the same expert and a lower index (a stable counting sort by comparisons: no atomics, no barrier)."""
    i = tl.program_id(0) * BP + tl.arange(0, BP)
    im = i < P
    e = tl.load(ids + i, mask=im, other=0)
    rank = tl.zeros([BP], tl.int32)
    for j0 in range(0, P, BJ):
        j = j0 + tl.arange(0, BJ)
        f = tl.load(ids + j, mask=j < P, other=1 << 30)  # past the pairs: after every expert
        before = (f[None, :] < e[:, None]) | ((f[None, :] == e[:, None]) & (j[None, :] < i[:, None]))
        rank += tl.sum(before.to(tl.int32), axis=1)
    tl.store(out + i, e, mask=im)
    tl.store(out + P + rank, i, mask=im)


def expert_order(ids: torch.Tensor) -> torch.Tensor:
    """ids (T, NSEL) flattened, then the pair indices grouped by expert (in pair order within one), as one int32
    array on the device (one launch, no host sync, capturable): the order `mmvq.matvec_experts` launches the pairs
    in. A pair's program reads its expert's rows; launched expert by expert, the pairs after an expert's first find
    its rows in L2 rather than memory (Qwen3.5-35B-A3B at 64 sequences: 512 pairs over ~220 of 256 experts, each hit
    expert read ~2.3 times in token order)."""
    flat = ids.reshape(-1).to(torch.int32).contiguous()
    p = flat.numel()
    out = torch.empty(2 * p, dtype=torch.int32, device=ids.device)
    bp = min(64, triton.next_power_of_2(max(p, 1)))
    order_kernel[(triton.cdiv(p, bp),)](flat, out, p, BP=bp, BJ=128, num_warps=4)
    return out


def experts_gemm(x: torch.Tensor, parts, qtype: int, n_experts: int, n: int, k: int, ids: torch.Tensor,
                 aligned=None, glu=None, bm: int = 0, bn: int = 64, warps: int = 4, stages: int = 3,
                 swap: bool | None = None, splits: int = 1, sems: torch.Tensor | None = None,
                 maxnreg: int = 0, out16: torch.Tensor | None = None) -> torch.Tensor:
    """x (T, K) or (T * k, K) f32, a quantized stack (E, N, K) as `parts` of type qtype, ids (T, k) ->
    (T, k, N) f32 through `experts_gemm_kernel`; aligned: `align_pairs(ids, E, bm)` when already made;
    glu: (parts of the up stack, GLU_ACTS code) for act(x Wg^T) * (x Wu^T). swap: the kernel's SWAP, by default
    for blocks of up to 32 pairs and for MXFP4 (`bench/cuda_experts_gemm_bench.py`, session 16: Qwen3.5's experts
    at 512 tokens 540 -> 381 us gate + up, GPT-OSS's 1,341 -> 1,087; with 64-pair blocks of Q4_K / Q6_K the
    unswapped order was 4-15 % faster). splits (with glu only summed in the launch): K in that many equal chunks of
    whole 64-blocks (or the most up to it that divide K's blocks), each its own programs, their partial products
    summed after (more programs for a narrow N; the sum's order fixed). sems: int32 zeros, one a (block, column
    block) tile or more (`CudaOps._sems`): the splits summed by the last of each tile inside the launch (the same
    order, no sum launch; session 44, H100: for the plain weights of a 64-sequence Qwen3-8B step 0.12 ms slower than
    the torch sums; session 45: 9.049 -> 9.221 ms, 9.282 with Q4_K capped at the loop's 96 registers, 9.659 with the
    slices' loads unrolled). maxnreg: ptxas's register cap (0: none; a knob of bench/cuda_tiles_gemm_bench.py).
    out16: a (T * k, N) f16 buffer the products are also stored to (for a GEMM that reads them next; the kernel then
    addresses the products with int32 offsets, so fewer than 2**31 of them)."""
    T, nsel = ids.shape
    if out16 is not None and T * nsel * n >= 1 << 31:
        raise ValueError(f"experts_gemm: {T * nsel} x {n} products are too many for out16's int32 offsets")
    bm = bm or block_rows(T * nsel, n_experts)
    swap = bm <= 32 or qtype == 39 if swap is None else swap
    pairs, block_e = aligned if aligned is not None else align_pairs(ids, n_experts, bm)
    # the kernel rounds x to f16 for its dots: rounded here once, every program's loads of it are half the bytes
    # (each of the N / bn column programs reads all of its rows; Qwen3-8B's gate + up at 64 rows: 192 MB -> 96 MB
    # of L2 reads a layer), the same products
    x = x.reshape(-1, k).to(torch.float16).contiguous()
    blocks = triton.cdiv(k, 64)
    tiles = block_e.numel() * triton.cdiv(n, bn)
    in_launch = sems is not None and sems.numel() >= tiles
    splits = max(s for s in range(1, min(splits, blocks) + 1) if blocks % s == 0) \
        if (glu is None or in_launch) and k % 64 == 0 else 1
    ks = k if splits == 1 else k // splits
    serial = splits if splits > 1 and in_launch else 0
    out = torch.empty((splits * (2 if serial and glu is not None else 1), T * nsel, n), dtype=torch.float32,
                      device=x.device)
    a, b, c, d = tile_parts(parts, qtype)
    a2, b2, c2, d2 = tile_parts(glu[0], qtype) if glu is not None else (a, b, c, d)
    fin = torch.empty((T * nsel, n), dtype=torch.float32, device=x.device) if serial else out
    experts_gemm_kernel[(block_e.numel(), triton.cdiv(n, bn), splits)](
        x, pairs, block_e, a, b, c, d, a2, b2, c2, d2, out, n, k, nsel, x.stride(0), ks, T * nsel * n, fin,
        sems if serial else block_e, out16 if out16 is not None else out, QT=qtype, BM=bm, BN=bn,
        PER_TOKEN=x.shape[0] == T and nsel > 1, GLU=glu is not None, ACT=glu[1] if glu is not None else 0,
        SWAP=bool(swap), SERIAL=serial, ASM=x.is_cuda, HALF=out16 is not None, num_warps=warps, num_stages=stages,
        **({"maxnreg": maxnreg} if maxnreg else {}))
    return (fin if serial else out[0] if splits == 1 else split_sum(out, out16)).reshape(T, nsel, n)


def tile_parts(parts, qtype: int) -> tuple:
    """The four arrays `quant.sub64` reads of a weight's parts (`zinc.backends.cuda.weights`): Q4_K qs, sm4 and dm as
    words (a step's scale fields two 4-byte words a row); the others their first four (one repeated)."""
    if qtype == 12:
        return parts[0], parts[4], parts[3].view(torch.int32), parts[0]
    if qtype == 14:
        return parts[0], parts[1], parts[2].view(torch.int32), parts[3]
    return tuple((list(parts) + [parts[0]] * 4)[:4])


def tiles_shape(n: int, k: int, rows: int, glu: bool) -> tuple[int, int, bool | None]:
    """`CudaOps._gemm_tiles`' (columns a program, splits of K, swap) for an (n, k) weight at `rows` rows: enough
    programs for the 132 SMs. H100, Qwen3-8B Q4_K_M's shapes, µs at 16 / 64 / 128 rows (bench/cuda_tiles_gemm_bench.py,
    session 43; session 42 had 32 columns unsplit for Q / O, 64 swapped for gate + up): every plain weight 64 columns
    in 8 K-splits, Q / O (4,096 x 4,096) 47.8 -> 31.4 at 64 rows (35.1 at 16, 46.2 at 128; the splits of down (K
    12,288) and K / V (N 1,024) as session 42 chose them: 82.5 / 61.2 and 23.4 / 18.5 at 64); the GLU pair 32 columns
    unswapped up to 32 rows and 64 swapped past 64 (162.1 at 128, where 32 unswapped took 203). Session 44 (the tiles'
    PTX values; the GLU's K-splits summed and activated in the launch): gate + up at 64 rows 98.8 -> 63.2 in 64
    swapped columns and 2 K-splits (77.7 unswapped, 94.8 / 80.9 in 4 splits; cuBLAS on a float16 copy 94.1). Session
    45: at 33-64 rows the square-ish weights (N 4,096-8,192, K up to 4,096; measured: Q / O and the stacked Q and K,
    N 4,096 and 5,120) in 64 swapped columns and 4 K-splits, Q / O 20.2 -> 17.9 us, the 64-sequence step 8.805 ->
    8.672 ms (two A/B pairs); swapped lost on K / V (N 1,024: 10.9 -> 14.2) and on Q6_K down (K 12,288: 63 -> 75)."""
    if glu:
        return (64, 2, True) if 32 < rows <= 64 else (32, 1, False) if rows <= 64 else (64, 1, True)
    if 32 < rows <= 64 and 4096 <= n <= 8192 and k <= 4096:
        return 64, 4, True
    return 64, 8, None


def block_rows(n_pairs: int, n_experts: int) -> int:
    """Pairs a block of `experts_gemm_kernel`: twice the mean pairs an expert (most experts' pairs in one block, their
    tiles dequantized once), as a power of two in 16..64 (session 16 sweep: Qwen3.5 at 512 tokens, 16 pairs an
    expert, 32-pair blocks)."""
    return min(64, max(16, triton.next_power_of_2(max(1, 2 * n_pairs // n_experts))))
