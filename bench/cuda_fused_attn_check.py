"""The decode step's fused rope_qk_kv_write + attention on the GPU at Qwen3-8B's attention shapes
(32 query heads, 8 KV heads, head dim 128, q/k norms, f16 cache): checked against the unfused path
(the rope_qk kernel, then the split + combine kernels), then both timed as a CUDA graph of 36 layers.

    python bench/cuda_fused_attn_check.py      (a short table; exits 1 when the paths disagree)
"""

from __future__ import annotations

import sys

import numpy as np
import torch

from zinc.backends.base import RopeParams
from zinc.backends.cuda.ops import CudaOps
from zinc.testing.compare import rel_err

HQ, HKV, DH, CELLS, LAYERS, REPLAYS = 32, 8, 128, 4096, 36, 50
ROPE = RopeParams(DH, "neox", 1e6)
EPS = 1e-6


def _layers(ops: CudaOps, n_kv: int, rng) -> list[dict]:
    """Per layer: raw q, k, v of one token, norm weights and a cache whose first n_kv - 1 cells are full."""
    out = []
    for _ in range(LAYERS):
        cp = np.where(np.arange(CELLS) < n_kv - 1, np.arange(CELLS), -1).astype(np.int32)
        out.append(dict(
            q=ops.from_numpy(rng.standard_normal((1, HQ, DH)).astype(np.float32)),
            k=ops.from_numpy(rng.standard_normal((1, HKV, DH)).astype(np.float32)),
            v=ops.from_numpy(rng.standard_normal((1, HKV, DH)).astype(np.float32)),
            qw=ops.from_numpy(rng.uniform(0.5, 1.5, DH).astype(np.float32)),
            kw=ops.from_numpy(rng.uniform(0.5, 1.5, DH).astype(np.float32)),
            ck=ops.from_numpy(rng.standard_normal((CELLS, HKV, DH)).astype(np.float16)),
            cv=ops.from_numpy(rng.standard_normal((CELLS, HKV, DH)).astype(np.float16)),
            cp=ops.from_numpy(cp)))
    return out


def _step(ops: CudaOps, layers: list[dict], pos, slots, n_kv: int, fused: bool) -> list[torch.Tensor]:
    """Each layer's rope_qk_kv_write then attention; unfused: an op between runs the rope kernel alone."""
    outs = []
    for L in layers:
        q = ops.rope_qk_kv_write(L["q"], L["k"], L["v"], pos, ROPE, None, L["ck"], L["cv"], L["cp"], slots,
                                 q_norm=L["qw"], k_norm=L["kw"], eps=EPS)
        if not fused:
            q = ops.reshape(q, q.shape)
        outs.append(ops.attention(q, L["ck"], L["cv"], pos, L["cp"], n_kv, 0.088))
    return outs


def _check(ops: CudaOps, n_kv: int, rng) -> float:
    """Largest relative difference of the outputs; caches must be equal bit for bit."""
    layers = _layers(ops, n_kv, rng)[:2]
    pos = ops.from_numpy(np.array([n_kv - 1], np.int32))
    slots = ops.from_numpy(np.array([n_kv - 1], np.int32))
    saved = [{k: t.clone() for k, t in L.items()} for L in layers]
    a = _step(ops, layers, pos, slots, n_kv, True)
    ca = [(L["ck"].clone(), L["cv"].clone(), L["cp"].clone()) for L in layers]
    b = _step(ops, saved, pos, slots, n_kv, False)
    for (k1, v1, p1), L in zip(ca, saved):
        if not (torch.equal(k1, L["ck"]) and torch.equal(v1, L["cv"]) and torch.equal(p1, L["cp"])):
            return float("inf")
    return max(rel_err(ops.to_numpy(x), ops.to_numpy(y)) for x, y in zip(a, b))


def _time(ops: CudaOps, n_kv: int, fused: bool, rng) -> float:
    """µs per layer of a replayed CUDA graph of LAYERS layers' rope + attention."""
    layers = _layers(ops, n_kv, rng)
    pos = ops.from_numpy(np.array([n_kv - 1], np.int32))
    ops.capturing = True  # as in a captured decode step: cells from the positions, extents on the device
    try:
        _step(ops, layers, pos, None, CELLS, fused)  # compile
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            _step(ops, layers, pos, None, CELLS, fused)
    finally:
        ops.capturing = False
    g.replay()
    torch.cuda.synchronize()
    t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0.record()
    for _ in range(REPLAYS):
        g.replay()
    t1.record()
    torch.cuda.synchronize()
    return t0.elapsed_time(t1) * 1000 / (REPLAYS * LAYERS)


def main() -> int:
    ops = CudaOps()
    rng = np.random.default_rng(0)
    bad = 0
    print(f"Qwen3-8B attention: Hq {HQ} Hkv {HKV} Dh {DH}, f16 cache of {CELLS} cells, {LAYERS} layers per graph")
    print(f"{'n_kv':>6} {'rel(fused, unfused)':>20} {'unfused us/layer':>17} {'fused us/layer':>15} {'saved':>7}")
    for n_kv in (1, 100, 4096):
        e = _check(ops, n_kv, rng)
        bad += not e < 1e-5
        tu, tf = _time(ops, n_kv, False, rng), _time(ops, n_kv, True, rng)
        print(f"{n_kv:>6} {e:>20.2e} {tu:>17.2f} {tf:>15.2f} {tu - tf:>7.2f}{'  <-- WRONG' if not e < 1e-5 else ''}",
              flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
