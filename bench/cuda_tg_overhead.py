"""What a greedy decode run costs beyond its steps: `Model.greedy` timed at several lengths, fitted as
a + b·n (a: the run's fixed cost, b: a step), against the captured step's replays (events).

    python bench/cuda_tg_overhead.py MODEL.gguf [--out DIR]

Also times the run's parts on the host: the batch upload, `cache.begin`, the graph's setup before the
first replay, the read-back of the ids. JSON under --out.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from cuda_tg_state import replay_times
from zinc.api import load
from zinc.models.base import Batch


def timed(fn, reps: int = 20, setup=None) -> float:
    """Median seconds of fn() (after setup(), untimed) with the GPU idle before and synchronized after."""
    ts = []
    for _ in range(reps):
        if setup:
            setup()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    m = load(a.model, backend="cuda", n_ctx=512)
    cache = m.new_cache(128)
    m.greedy(1, cache, 8)
    lengths = [1, 2, 4, 8, 16, 32, 64, 128]
    t = {n: timed(lambda: m.greedy(1, cache, n), 9 if n >= 64 else 20, cache.reset) for n in lengths}
    ns = np.array(lengths[2:], float)
    b, a0 = np.polyfit(ns, np.array([t[int(n)] for n in ns]), 1)
    g = [v for k, v in m.ops._graphs.graphs.items() if k[-1] == "greedy"][-1]
    replay = replay_times(m, cache, 100, g)[0] * 1e-6
    parts = {
        "reset": timed(lambda: cache.reset()),
        "batch_make": timed(lambda: Batch.make(m.ops, [1], 0, last_only=True)),
        "begin": timed(lambda: cache.begin(np.array([0])), setup=cache.reset),
        "ids_readback": timed(lambda: g.chosen[:128].cpu()),
    }
    res = {"run_s": {str(n): t[n] for n in lengths}, "fit_fixed_us": a0 * 1e6, "fit_step_us": b * 1e6,
           "replay_us": replay * 1e6, "tg128_tok_s": 128 / t[128], "parts_us": {k: v * 1e6 for k, v in parts.items()},
           "device": torch.cuda.get_device_name()}
    print(json.dumps(res, indent=1))
    print(f"fixed {a0 * 1e6:.1f} us  step {b * 1e6:.1f} us  replay {replay * 1e6:.1f} us  tg128 {128 / t[128]:.1f} "
          f"(at replay speed {1 / replay:.1f})")
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        (Path(a.out) / "tg_overhead.json").write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
