"""A prompt's expert matmuls of Qwen3.5-35B-A3B as the grouped GEMM or as the matvec over (token, expert) pairs, each
with the prompt chunks captured as CUDA graphs or run eagerly ("pairs eager" = the session-15 start), A/B in one
process (rounds alternate forms; `zinc bench` in fresh processes is host-noisy for this model). Each form: 5 prompts
on one cache, reset, the median of the last 3 (the first runs eagerly, the second captures).

    python bench/cuda_q35_gemm_ab.py MODEL.gguf [--rounds N] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from zinc.api import load
from zinc.backends.cuda.ops import CudaOps

FORMS = ("gemm graphs", "pairs graphs", "gemm eager", "pairs eager")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out")
    a = ap.parse_args()
    rule = CudaOps._gemm_experts
    m = load(a.model, backend="cuda", n_ctx=2048 + 8)
    rng = np.random.default_rng(0)
    rows = []
    for r in range(a.rounds):
        for form in FORMS:
            CudaOps._gemm_experts = rule if form.startswith("gemm") else (lambda self, w, pairs: False)
            m.ops._graphs = None  # the graphs of the other form would be replayed
            m.ops.graphs_enabled = form.endswith("graphs")
            for n in (512, 2048):
                toks = [int(i) for i in rng.integers(0, m.n_vocab, n)]
                times = []
                cache = m.new_cache(n + 8)
                for i in range(5):
                    cache.reset()
                    torch.cuda.synchronize()
                    t0 = time.perf_counter()
                    m.forward(toks, cache, last_only=True)
                    torch.cuda.synchronize()
                    if i >= 2:
                        times.append(time.perf_counter() - t0)
                rate = n / float(np.median(times))
                rows.append({"round": r, "form": form, "tokens": n, "tok_s": rate, "times_s": times})
                print(f"round {r} {form:13} pp{n}: {rate:7.0f} tok/s", flush=True)
    for form in FORMS:
        for n in (512, 2048):
            v = [x["tok_s"] for x in rows if x["form"] == form and x["tokens"] == n]
            print(f"{form:13} pp{n}: mean {np.mean(v):7.0f}  min {min(v):7.0f}  max {max(v):7.0f}")
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        (Path(a.out) / "q35-gemm-ab.json").write_text(json.dumps({"model": a.model, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
