"""Does a prompt run before it change a decode's speed in the same process? (`zinc bench` tg128 461 after pp512 and
pp2048, 487.7 alone: session 15.)

    python bench/cuda_tg_after_pp.py MODEL.gguf [--out DIR]

One process: tg128 on a fresh 128-cell cache (what `zinc bench` builds), then prompts of 512 and of 2048 tokens on
their own caches, tg128 again after each, then with the captured graphs dropped and the allocator's cache emptied,
then on a 4096-cell cache. Each tg line: tok/s (3 timed runs after a warm-up), and over 32 profiled steps the
kernels' µs a step, the matvecs' and the attention's. JSON under --out.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
from pathlib import Path

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).parent))
from cuda_step_profile import kernel_rows  # noqa: E402
from cuda_tg_state import tg_rates  # noqa: E402

from zinc.api import load  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--out")
    a = ap.parse_args()
    m = load(a.model, backend="cuda", n_ctx=4096)
    rng = np.random.default_rng(0)
    rows = []

    def tg(label: str, cells: int = 128) -> None:
        cache = m.new_cache(cells)
        rates = tg_rates(m, cache)
        cache.reset()
        m.greedy(1, cache, 8)
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            m.greedy(2, cache, 32)
            torch.cuda.synchronize()
        ks, total = kernel_rows(prof, 32)
        by = {n: t for n, _, t in ks}
        row = {"label": label, "cells": cells, "tok_s": rates, "kernels_us": total,
               "mmvs_us": by.get("mmvs_kernel", 0.0), "quantize_us": by.get("quantize_kernel", 0.0),
               "attn_us": by.get("attn_split_kernel", 0.0) + by.get("attn_combine_kernel", 0.0),
               "alloc_reserved_gb": torch.cuda.memory_reserved() / 2**30}
        rows.append(row)
        print(f"{label:28} {np.mean(rates):7.1f} tok/s  kernels {total:7.1f} us  mmvs {row['mmvs_us']:7.1f}  "
              f"quant {row['quantize_us']:6.1f}  attn {row['attn_us']:6.1f}  reserved {row['alloc_reserved_gb']:.1f} GB",
              flush=True)

    def pp(n: int) -> None:
        cache = m.new_cache(n)
        ids = [int(i) for i in rng.integers(0, m.n_vocab, n)]
        for _ in range(4):
            cache.reset()
            m.forward(ids, cache, last_only=True)
        torch.cuda.synchronize()

    tg("fresh")
    tg("fresh again")
    pp(512)
    tg("after pp512")
    pp(2048)
    tg("after pp2048")
    tg("after pp2048, again")
    m.ops._graphs = None
    gc.collect()
    torch.cuda.empty_cache()
    tg("graphs dropped, cache emptied")
    tg("4096-cell cache", 4096)
    pp(2048)
    tg("4096 cells after pp2048", 4096)
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        (Path(a.out) / "tg-after-pp.json").write_text(json.dumps({"model": a.model, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
