"""Where a CUDA prompt's time goes: per-kernel totals over prefills of one prompt, against the wall time.

    python bench/cuda_prefill_profile.py MODEL.gguf [--tokens N] [--runs R] [--ctx C] [--no-experts-gemm] [--out DIR]

Prefills N random tokens into a fresh cache R times (after two warm-up runs) with the torch profiler and prints, per
kernel name: launches and microseconds per prompt, share of the kernels' time; plus the wall time per prompt and the
share of it the GPU spent in kernels (the rest: the host launching them, syncs). --ctx: the cache's cells (default
the prompt's); --no-experts-gemm: a prompt's expert matmuls as before the grouped GEMM, for A/B. JSON under --out.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile

from zinc.api import load

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cuda_step_profile import kernel_rows, print_rows  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--tokens", type=int, default=512)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--ctx", type=int, default=0)
    ap.add_argument("--no-experts-gemm", action="store_true")
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.no_experts_gemm:
        from zinc.backends.cuda.ops import CudaOps
        CudaOps._gemm_experts = lambda self, w, pairs: False
    m = load(a.model, backend="cuda", n_ctx=a.ctx or a.tokens + 8)
    toks = [int(i) for i in np.random.default_rng(0).integers(0, m.n_vocab, a.tokens)]

    def prompt():
        m.forward(toks, m.new_cache(), last_only=True)
        torch.cuda.synchronize()

    prompt(), prompt()
    t0 = time.perf_counter()
    for _ in range(a.runs):
        prompt()
    wall = (time.perf_counter() - t0) / a.runs
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(a.runs):
            prompt()
    rows, total = kernel_rows(prof, a.runs)
    tag = f"ctx {a.ctx or a.tokens + 8}{', experts before the GEMM' if a.no_experts_gemm else ''}"
    print(f"{tag}: {a.tokens} tokens: wall {wall * 1e3:.2f} ms ({a.tokens / wall:.0f} tok/s), kernels {total / 1e3:.2f} ms "
          f"({total / 1e6 / wall:.0%} of the wall), {sum(r[1] for r in rows):.0f} launches")
    print_rows(rows, total, 8, "")
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        name = f"prefill-profile-{Path(a.model).stem}-{a.tokens}-ctx{a.ctx or a.tokens + 8}"
        (Path(a.out) / f"{name}{'-before' if a.no_experts_gemm else ''}.json").write_text(json.dumps(
            {"model": a.model, "tokens": a.tokens, "ctx": a.ctx or a.tokens + 8, "experts_gemm": not a.no_experts_gemm, "wall_ms": wall * 1e3, "kernel_ms": total / 1e3,
             "kernels": [{"name": n, "per_prompt": c, "us_per_prompt": t} for n, c, t in rows]}, indent=1))


if __name__ == "__main__":
    main()
