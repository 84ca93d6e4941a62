"""Programmatic dependent launch in the CUDA backend: correctness and decode speed per mode.

    python bench/cuda_pdl_diag.py TINY.gguf MODEL.gguf

Modes (kernels.PDL for the matvecs, kernels.PDL_OTHER for the rest): 0 plain launches, 1 wait for the
previous kernel first, 2 also let the next kernel launch first. For each mode: the tiny model's
prompt logits, eager decode steps and graph decode steps against mode (0, 0); the compiled PTX of
every PDL kernel checked for a global load or store before `griddepcontrol.wait`; then greedy
decode of 128 tokens on MODEL (graph replays) timed per mode.
"""

from __future__ import annotations

import re
import sys
import time

import numpy as np
import torch

from zinc.api import load
from zinc.backends.cuda import kernels

MODES = [(0, 0), (2, 2), (1, 1), (2, 1), (2, 0), (1, 0)]


def run_tiny(path: str, ids: list[int]) -> dict[str, np.ndarray]:
    out = {}
    for graphs in (False, True):
        m = load(path, backend="cuda", n_ctx=64)
        m.ops.graphs_enabled = graphs
        cache = m.new_cache(64)
        steps = [m.forward(ids[:8], cache)] + [m.forward([t], cache, last_only=True) for t in ids[8:]]
        out["graph" if graphs else "eager"] = np.concatenate(steps)
    return out


def ptx_order() -> None:
    import importlib
    for mod in ("mmvq", "attention", "elementwise", "moe", "recurrent", "matvec_generic", "quant"):
        km = importlib.import_module(f"zinc.backends.cuda.kernels.{mod}")
        for name in dir(km):
            fn = getattr(km, name)
            caches = getattr(fn, "device_caches", None)
            if not name.endswith("_kernel") or not caches:
                continue
            for dev_cache in caches.values():
                for ck in dev_cache[0].values():
                    ptx = ck.asm.get("ptx", "")
                    if "griddepcontrol.wait" not in ptx:
                        continue
                    lines = ptx.split("\n")
                    wait = next(i for i, ln in enumerate(lines) if "griddepcontrol.wait" in ln)
                    early = [ln.strip() for ln in lines[:wait] if re.search(r"\b(ld|st|atom|red)\.global", ln)]
                    pf = sum("prefetch.global.L2" in ln for ln in lines)
                    print(f"ptx {name}: wait at line {wait}, {len(early)} global accesses before it, {pf} prefetches"
                          + (f": {early[:3]}" if early else ""), flush=True)


def main() -> None:
    tiny, big = sys.argv[1], sys.argv[2]
    ids = [int(i) for i in np.random.default_rng(8).integers(0, 512, 24)]
    ref = None
    for mode in MODES:
        kernels.PDL, kernels.PDL_OTHER = mode
        got = run_tiny(tiny, ids)
        if ref is None:
            ref = got
            continue
        diffs = {k: float(np.abs(got[k] - ref[k]).max()) for k in got}
        print(f"tiny mode {mode}: max |diff| vs plain: {diffs}", flush=True)
    ptx_order()
    m = load(big, backend="cuda", n_ctx=512)
    rows = []
    for mode in MODES + MODES[:2]:
        kernels.PDL, kernels.PDL_OTHER = mode
        m.ops._graphs = None  # capture again with this mode's launches
        cache = m.new_cache()
        m.forward([1, 2, 3, 4], cache)
        m.greedy(5, cache, 8)
        ts = []
        for _ in range(3):
            cache.truncate(4)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            m.greedy(5, cache, 128)
            torch.cuda.synchronize()
            ts.append(time.perf_counter() - t0)
        tps = 128 / float(np.median(ts))
        rows.append((mode, tps))
        print(f"decode mode {mode}: {tps:.1f} tok/s (128 greedy tokens, median of 3)", flush=True)


if __name__ == "__main__":
    main()
