"""Where a CUDA decode step's time goes: per-kernel totals over graph-replayed greedy steps.

    python bench/cuda_step_profile.py MODEL.gguf [--depth D] [--steps N] [--seqs B] [--out DIR]

Fills D random tokens, then profiles N greedy steps (`Model.greedy`: CUDA-graph replays) with the
torch profiler (CUPTI sees the kernels inside graphs) and prints, per kernel name: launches per
step, microseconds per step, share of the step; plus the step's wall time. JSON under --out.
With --seqs B: B caches of D tokens each decode together (`Model.forward_seqs(argmax=True)`, group graphs).
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


def profile_seqs(a) -> None:
    """B sequences of a.depth tokens each, decoding together: wall and kernels per group step."""
    m = load(a.model, backend="cuda", n_ctx=a.depth + 4 * a.steps + 8, kv_dtype=a.kv_type)
    rng = np.random.default_rng(0)
    caches = [m.new_cache() for _ in range(a.seqs)]
    for c in caches:
        m.forward([int(i) for i in rng.integers(0, m.n_vocab, max(a.depth, 1))], c, last_only=True)
    toks = [int(i) for i in rng.integers(0, m.n_vocab, a.seqs)]

    def steps(toks):
        for _ in range(a.steps):
            toks = m.forward_seqs([([t], c) for t, c in zip(toks, caches)], argmax=True).tolist()
        torch.cuda.synchronize()
        return toks

    toks = steps(toks)  # capture + warm
    t0 = time.perf_counter()
    toks = steps(toks)
    wall = (time.perf_counter() - t0) / a.steps
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        steps(toks)
    rows, total = kernel_rows(prof, a.steps)
    print(f"{a.seqs} seqs at depth {a.depth}: wall {wall * 1e3:.3f} ms/step ({a.seqs / wall:.0f} tok/s), "
          f"kernels {total / 1e3:.3f} ms/step, {sum(r[1] for r in rows):.0f} launches/step")
    print_rows(rows, total, 25, "/step")
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        (Path(a.out) / f"step-profile-x{a.seqs}-d{a.depth}.json").write_text(json.dumps(
            {"model": a.model, "depth": a.depth, "seqs": a.seqs, "kv_type": a.kv_type, "wall_ms": wall * 1e3,
             "kernels": [{"name": n, "per_step": c, "us_per_step": t} for n, c, t in rows]}, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--depth", type=int, default=0)
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--out")
    ap.add_argument("--kv-type", default="f16", choices=["f16", "f32", "q8_0"])
    ap.add_argument("--seqs", type=int, default=0)
    a = ap.parse_args()
    if a.seqs:
        return profile_seqs(a)
    m = load(a.model, backend="cuda", n_ctx=a.depth + 4 * a.steps + 8, kv_dtype=a.kv_type)
    rng = np.random.default_rng(0)
    cache = m.new_cache()
    if a.depth:
        m.forward([int(i) for i in rng.integers(0, m.n_vocab, a.depth)], cache, last_only=True)
    m.greedy(1, cache, a.steps)  # capture + warm
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    m.greedy(2, cache, a.steps)
    torch.cuda.synchronize()
    wall = (time.perf_counter() - t0) / a.steps
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        m.greedy(3, cache, a.steps)
        torch.cuda.synchronize()
    rows, total = kernel_rows(prof, a.steps)
    print(f"depth {a.depth}: wall {wall * 1e3:.3f} ms/step, kernels {total / 1e3:.3f} ms/step, "
          f"{sum(r[1] for r in rows):.0f} launches/step")
    print_rows(rows, total, 25, "/step")
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        tag = "" if a.kv_type == "f16" else f"-{a.kv_type}"
        (Path(a.out) / f"step-profile-d{a.depth}{tag}.json").write_text(json.dumps(
            {"model": a.model, "depth": a.depth, "kv_type": a.kv_type, "wall_ms": wall * 1e3,
             "kernels": [{"name": n, "per_step": c, "us_per_step": t} for n, c, t in rows]}, indent=1))


if __name__ == "__main__":
    main()
