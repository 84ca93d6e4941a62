"""Where a CUDA decode step's time goes: per-kernel totals over graph-replayed greedy steps.

    python bench/cuda_step_profile.py MODEL.gguf [--depth D] [--steps N] [--seqs B] [--out DIR]

Fills D random tokens, then profiles N greedy steps (`Model.greedy`: CUDA-graph replays) with the
torch profiler (CUPTI sees the kernels inside graphs) and prints, per kernel name: launches per
step, microseconds per step, share of the step; plus the step's wall time. JSON under --out.
With --seqs B: B caches of D tokens (at least 1) each decode together (`Model.greedy_seqs`: replays of a
captured group step, what `zinc bench --parallel` times).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile

from zinc.api import load


def kernel_rows(prof, n: int) -> tuple[list, float]:
    """The profiler's CUDA kernels by name: [(name, launches / n, us / n)] longest first, and their total us / n."""
    per = defaultdict(lambda: [0, 0.0])
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            p = per[e.name[:60]]
            p[0] += 1
            p[1] += e.device_time
    rows = sorted(((name, c / n, t / n) for name, (c, t) in per.items()), key=lambda r: -r[2])
    return rows, sum(t for _, _, t in rows)


def print_rows(rows: list, total: float, top: int, unit: str) -> None:
    print(f"{'kernel':60} {'n' + unit:>7} {'us' + unit:>9} {'share':>6}")
    for name, c, t in rows[:top]:
        print(f"{name:60} {c:7.1f} {t:9.1f} {t / total:6.1%}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--depth", type=int, default=0)
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--out")
    ap.add_argument("--kv-type", default="f16", choices=["f16", "f32", "q8_0"])
    ap.add_argument("--seqs", type=int, default=0)
    ap.add_argument("--expert-order-min", type=int, default=0,
                    help="tokens from which MoE pairs launch expert by expert (cuda ops.EXPERT_ORDER_MIN_TOKENS; "
                         "0: the default) for A/B runs")
    a = ap.parse_args()
    if a.expert_order_min:
        from zinc.backends.cuda import ops as cuda_ops

        cuda_ops.EXPERT_ORDER_MIN_TOKENS = a.expert_order_min
    m = load(a.model, backend="cuda", n_ctx=a.depth + 4 * a.steps + 8, kv_dtype=a.kv_type)
    rng = np.random.default_rng(0)
    caches = [m.new_cache() for _ in range(max(a.seqs, 1))]
    for c in caches:
        if a.depth or a.seqs:  # (a group's sequences hold at least one token each)
            m.forward([int(i) for i in rng.integers(0, m.n_vocab, max(a.depth, 1))], c, last_only=True)
    if a.seqs:
        firsts = [int(i) for i in rng.integers(0, m.n_vocab, a.seqs)]

        def run(first: int) -> None:
            m.greedy_seqs(firsts, caches, a.steps)
        label, tok_s, tag = f"{a.seqs} seqs at depth {a.depth}", a.seqs, f"x{a.seqs}-"
    else:
        def run(first: int) -> None:
            m.greedy(first, caches[0], a.steps)
        label, tok_s, tag = f"depth {a.depth}", 1, ""
    run(1)  # capture + warm
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    run(2)
    torch.cuda.synchronize()
    wall = (time.perf_counter() - t0) / a.steps
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        run(3)
        torch.cuda.synchronize()
    rows, total = kernel_rows(prof, a.steps)
    print(f"{label}: wall {wall * 1e3:.3f} ms/step ({tok_s / wall:.0f} tok/s), kernels {total / 1e3:.3f} ms/step, "
          f"{sum(r[1] for r in rows):.0f} launches/step")
    print_rows(rows, total, 25, "/step")
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        kv = "" if a.kv_type == "f16" else f"-{a.kv_type}"
        (Path(a.out) / f"step-profile-{tag}d{a.depth}{kv}.json").write_text(json.dumps(
            {"model": a.model, "depth": a.depth, "seqs": a.seqs, "kv_type": a.kv_type, "wall_ms": wall * 1e3,
             "kernels": [{"name": n, "per_step": c, "us_per_step": t} for n, c, t in rows]}, indent=1))


if __name__ == "__main__":
    main()
