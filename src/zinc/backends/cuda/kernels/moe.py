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

GATINGS = {"softmax": 0, "sigmoid": 1, "softmax_weight": 2}


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
