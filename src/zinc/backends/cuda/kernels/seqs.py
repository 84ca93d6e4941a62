"""Decode attention of B sequences at once, one new token each, every sequence with its own KV cache.

Batched decode runs a layer's attention for all its sequences in one set of launches. Their caches are
separate tensors, found on the device through a pointer table: row b of `table` (B, 4) int64 is
`table_row(k_cells, v_cells, cell_pos)` of sequence b, that is the addresses of its cells k (size, Hkv, D) and
v (size, Hkv, Dv) (f16, or f32; every sequence the same) and of the cells' token positions (size,) int32
(-1 = empty), then its number of cells. Sizes may differ between sequences.

Three launches, none of which depends on the positions (a captured CUDA graph replays them as the
sequences grow):
1. `seq_rope_kernel`, grid (B, head blocks of q + head blocks of k): `elementwise._rope_heads` per sequence,
   as `elementwise.rope_qk` does for one: the per-head norms, the rope of q into a scratch, the rope of k and
   its cache write with v at cell pos % size (a ring where size <= pos), and the cell's position.
2. `seq_split_kernel`, grid (B * Hkv * row blocks, NSPLIT): the R = Hq / Hkv query heads of one KV head of
   one sequence (padded to at least 16 rows) against one contiguous chunk of that sequence's readable cells
   [0, min(size, pos + 1)), the chunk worked out on the device; the loop is `attention._attend`'s (`tl.dot`
   on f16 operands with f32 sums for f16 cells, f32 dots for f32 cells, online softmax in base 2, the causal
   and window mask from the cells' positions). It writes its max, sum and unnormalised output (a split
   with no cells: max NEG, sum 0), or with one split the output itself.
3. `attention.attn_combine_kernel` merges the splits and the attention sink (skipped for one split).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from zinc.backends.cuda.kernels.attention import (COMBINE_DIMS, COMBINE_WHOLE, NEG, STAGES, _attend, _finish,
                                                  _operand, attn_combine_kernel, tiles)
from zinc.backends.cuda.kernels.elementwise import _rope_heads, _rope_meta, packed_rows

SPLIT_CELLS = 512  # cells a split program covers, about, before `seq_splits` adds another split
MAX_SPLITS = 16
# cells a step of the split loop (`attention.tiles` may lower it for wide heads). H100, 64 sequences of Qwen3-8B's heads
# (bench/cuda_seqs_attn_bench.py, session 45): 32 cells 28.5 -> 21.2 us at depth 128, 152.9 -> 126.7 at 1,024, 467 at
# 4,096 (16 cells: 24.3 / 167.2 / 559; 128: 35.4 / 166.3); the 64-sequence step 9.05 -> 8.80 ms, zinc bench tg64 of
# 64 sequences 7,176 -> 7,320 tok/s
BLOCK_CELLS = 32


def seq_splits(max_cells: int) -> int:
    """NSPLIT for caches of up to max_cells cells: 1 up to 512 cells, then a power of two giving about
    SPLIT_CELLS cells a split, at most MAX_SPLITS (reached at 8k cells). B * Hkv programs already run
    side by side, so long caches need fewer splits than a single sequence's decode."""
    return min(MAX_SPLITS, triton.next_power_of_2(triton.cdiv(max(max_cells, 1), SPLIT_CELLS)))


def table_row(k_cells, v_cells, cell_pos) -> list[int]:
    """One sequence's row of the pointer table: the addresses of its k and v cells and of its cells'
    positions, and its number of cells. The tensors must outlive every launch that reads the row, at addresses
    16-byte aligned (as torch allocates them)."""
    return [k_cells.data_ptr(), v_cells.data_ptr(), cell_pos.data_ptr(), k_cells.shape[0]]


@triton.jit
def _cells(table, b, KV16: tl.constexpr):
    """Row b of the table as (k cells, v cells, cell positions) pointers and the number of cells (int32); the
    addresses 16-byte aligned (`CudaOps.kv_tables` checks; told to Triton, the tiles' copies are 16 bytes, not 4)."""
    row = table + b.to(tl.int64) * 4
    if KV16:
        ck = tl.load(row).to(tl.pointer_type(tl.float16))
        cv = tl.load(row + 1).to(tl.pointer_type(tl.float16))
    else:
        ck = tl.load(row).to(tl.pointer_type(tl.float32))
        cv = tl.load(row + 1).to(tl.pointer_type(tl.float32))
    cpos = tl.multiple_of(tl.load(row + 2).to(tl.pointer_type(tl.int32)), 16)
    ck, cv = tl.multiple_of(ck, 16), tl.multiple_of(cv, 16)
    return ck, cv, cpos, tl.load(row + 3).to(tl.int32)


@triton.jit
def seq_rope_kernel(q, sq, qw, qout, k, sk, kw, v, sv, pos, table, c, HQ, HK, Dh, DV, eps, mscale, KV16: tl.constexpr,
                    NDIMS: tl.constexpr, NEOX: tl.constexpr, QNORM: tl.constexpr, KNORM: tl.constexpr,
                    BH: tl.constexpr, HP: tl.constexpr, DP: tl.constexpr, BV: tl.constexpr):
    """Sequence b = program_id(0) of q (B, HQ, Dh), k (B, HK, Dh), v (B, HK, DV) (rows sq, sk, sv apart, each row
    packed: `elementwise.packed_rows`): the first head blocks
    rope q into qout, the rest rope k into the sequence's cell pos[b] % size with v beside it
    (`elementwise.rope_qk_kernel` with the cells from the table)."""
    b = tl.program_id(0)
    blk = tl.program_id(1)
    nq = tl.cdiv(HQ, BH)
    if blk < nq:
        _rope_heads(q, sq, qw, qout, pos, c, b, blk * BH, HQ, Dh, eps, mscale, pos, q, q, pos, q, sq, 1, DV, NDIMS,
                    NEOX, QNORM, QNORM, True, False, True, BH, HP, DP, BV)
    else:
        ck, cv, cpos, size = _cells(table, b, KV16)
        _rope_heads(k, sk, kw, k, pos, c, b, (blk - nq) * BH, HK, Dh, eps, mscale, pos, ck, cv, cpos, v, sv, size,
                    DV, NDIMS, NEOX, KNORM, KNORM, False, True, True, BH, HP, DP, BV)


@triton.jit
def seq_split_kernel(qr, table, pos, sinks, out, m_out, l_out, o_out, HQ, NSPLIT, scale2, window, R: tl.constexpr,
                     D: tl.constexpr, DV: tl.constexpr, DP: tl.constexpr, DVP: tl.constexpr, HKV: tl.constexpr,
                     BM: tl.constexpr, BS: tl.constexpr, KV16: tl.constexpr, FINAL: tl.constexpr,
                     HAS_SINK: tl.constexpr, HALF: tl.constexpr = False):
    """Query heads (BM of the R of KV head hk) of sequence b against split sp's chunk of its readable cells
    (chunks of a multiple of BS cells, from pos[b] and the size on the device). qr (B, HQ, D): the rotated
    queries; scale2: the score scale times log2(e). Partials at row (b * HQ + h) * NSPLIT + sp (max in
    natural-log units, as `attn_combine_kernel` reads them); FINAL (one split): the output (B, HQ, DV), with HALF
    also in f16 to o_out."""
    pid = tl.program_id(0)
    sp = tl.program_id(1)
    nrb: tl.constexpr = (R + BM - 1) // BM
    b = pid // (HKV * nrb)
    hk = pid // nrb % HKV
    r = (pid % nrb) * BM + tl.arange(0, BM)
    rm = r < R
    head = b * HQ + hk * R + r
    ck, cv, cpos, size = _cells(table, b, KV16)
    p = tl.load(pos + b)
    n_eff = tl.minimum(size, p + 1)
    chunk = tl.cdiv(tl.cdiv(n_eff, NSPLIT), BS) * BS
    start = sp * chunk
    end = tl.minimum(start + chunk, n_eff)
    dd = tl.arange(0, DP)
    qv = tl.load(qr + head[:, None] * D + dd[None, :], mask=rm[:, None] & (dd < D)[None, :], other=0.0)
    qh, ql = _operand(qv * scale2, KV16)
    qp = tl.zeros([BM], tl.int32) + p
    m_i = tl.full([BM], NEG, tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, DVP], tl.float32)
    for s0 in range(start, end, BS):
        m_i, l_i, acc = _attend(ck, cv, ck, cv, cpos, s0, end, hk, qh, ql, qp, m_i, l_i, acc, scale2, 1.0, window,
                                HKV, D, DV, DP, DVP, BM, BS, False, False, KV16, False, True)
    if FINAL:
        _finish(m_i, l_i, acc, head, rm, sinks, out, o_out, out, out, HQ, BM, DV, DVP, HAS_SINK, False, HALF)
    else:
        row = head * NSPLIT + sp
        dv = tl.arange(0, DVP)
        tl.store(m_out + row, m_i * 0.6931471805599453, mask=rm)
        tl.store(l_out + row, l_i, mask=rm)
        tl.store(o_out + row[:, None] * DV + dv[None, :], acc, mask=rm[:, None] & (dv < DV)[None, :])


def attention_seqs(q, k, v, pos, table, cells_f16: bool, c, mscale: float, n_dims: int, neox: bool,
                   scale: float, window: int = 0, sinks=None, q_w=None, k_w=None, eps: float = 0.0,
                   nsplit: int | None = None, max_cells: int = 0, out16: torch.Tensor | None = None) -> torch.Tensor:
    """The attention output (B, Hq, Dv) f32 of B sequences' new tokens, each over its own cache (see the
    module docstring), the new keys and values written to the caches first.

    q (B, Hq, D), k (B, Hkv, D), v (B, Hkv, Dv) f32: the raw projections; pos (B,) int32: each token's position;
    table (B, 4) int64: `table_row` of each sequence; cells_f16: the cells are f16 (else f32). Rope: c and mscale
    of `CudaOps._rope_factors`, n_dims, neox (the NEOX pair layout) as `elementwise.rope_qk`; q_w / k_w: RMS-norm
    each head of that side first (eps), times the weight. Attention: softmax(scale * q.k) over the visible cells
    (position <= pos, and pos - position < window when window > 0), sinks (Hq,): one more logit per head in the
    denominator. nsplit: splits over the cells (default `seq_splits(max_cells)`); the launches depend only on
    the shapes and nsplit, not on pos or the caches' sizes. No host sync. out16: (B, Hq * Dv) f16, the output
    stored there in f16 too (for the output projection's tile GEMM)."""
    B, hq, d = q.shape
    hkv, dv = k.shape[1], v.shape[2]
    r = hq // hkv
    (q, sq), (k, sk), (v, sv) = packed_rows(q), packed_rows(k), packed_rows(v)  # (the parts of a fused projection's
    # output as they are)
    nsplit = nsplit or seq_splits(max_cells)
    qr = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    meta, warps = _rope_meta(max(hq, hkv), d, n_dims, dv)
    nb = triton.cdiv(hq, meta["BH"]) + triton.cdiv(hkv, meta["BH"])
    seq_rope_kernel[(B, nb)](q, sq, q_w if q_w is not None else q, qr, k, sk, k_w if k_w is not None else k, v, sv,
                             pos, table, c, hq, hkv, d, dv, eps, mscale, KV16=cells_f16, NDIMS=n_dims, NEOX=neox,
                             QNORM=q_w is not None, KNORM=k_w is not None, num_warps=warps, **meta)
    out = torch.empty((B, hq, dv), dtype=torch.float32, device=q.device)
    final = nsplit == 1
    rows = 1 if final else B * hq * nsplit
    m = torch.empty(rows, dtype=torch.float32, device=q.device)
    l = torch.empty(rows, dtype=torch.float32, device=q.device)
    o = out16 if final and out16 is not None else torch.empty(rows * (1 if final else dv), dtype=torch.float32,
                                                              device=q.device)
    snk = sinks if sinks is not None else m
    bm, bs, stages, warps = tiles(r, d, dv, BLOCK_CELLS, STAGES, None, 2 if cells_f16 else 4)
    dp, dvp = max(16, triton.next_power_of_2(d)), max(16, triton.next_power_of_2(dv))
    seq_split_kernel[(B * hkv * triton.cdiv(r, bm), nsplit)](
        qr, table, pos, snk, out, m, l, o, hq, nsplit, scale * 1.4426950408889634, window, R=r, D=d, DV=dv, DP=dp,
        DVP=dvp, HKV=hkv, BM=bm, BS=bs, KV16=cells_f16, FINAL=final, HAS_SINK=sinks is not None,
        HALF=final and out16 is not None, num_warps=warps, num_stages=stages)
    if final:
        return out
    nsp = max(2, triton.next_power_of_2(nsplit))
    dvp = triton.next_power_of_2(dv)
    dc = COMBINE_DIMS if dv % COMBINE_DIMS == 0 and nsp * dvp > COMBINE_WHOLE else dvp
    attn_combine_kernel[(B * hq, triton.cdiv(dv, dc))](
        m, l, o, snk, out, out16 if out16 is not None else m, m, m, hq, NSPLIT=nsplit, NSP=nsp, DV=dv, DC=dc,
        HAS_SINK=sinks is not None, CH=min(nsp, max(2, 4096 // dc)), QUANT=False, HALF=out16 is not None,
        num_warps=4 if nsp * dc >= 4096 else 1)
    return out
