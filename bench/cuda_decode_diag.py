"""Which CUDA path makes a model's logits differ? Every mode against one reference.

    python bench/cuda_decode_diag.py MODEL.gguf [-n 8] [--cpu]

For n random tokens: teacher-forced prefill and step-by-step decode (half the tokens as a prompt,
then one at a time; eager and graph-replayed) in three CUDA modes: default numerics, default with
the experts on f32 activations (the generic matvec), and exact=True (f32 activations, f32 KV
cells). Each against the reference (the NumPy backend's logits with --cpu, else exact prefill):
relative error, mean KL, and the relative error per position.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from zinc.api import load
from zinc.backends.cuda import ops as cops
from zinc.testing.compare import mean_kl, rel_err


def stepwise(m, ids, graphs: bool):
    m.ops.graphs_enabled = graphs
    cache = m.new_cache(len(ids) + 4)
    half = len(ids) // 2
    out = [m.forward(ids[:half], cache)] + [m.forward([t], cache, last_only=True) for t in ids[half:]]
    m.ops.graphs_enabled = True
    return np.concatenate(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("-n", type=int, default=8)
    ap.add_argument("--cpu", action="store_true", help="the NumPy backend's logits as the reference")
    a = ap.parse_args()
    default = load(a.model, backend="cuda", n_ctx=256)
    exact = load(a.model, backend="cuda", n_ctx=256, exact=True, kv_dtype="f32")
    ids = [int(i) for i in np.random.default_rng(0).integers(0, default.n_vocab, a.n)]
    res = {"exact prefill": exact.logits(ids), "exact steps": stepwise(exact, ids, False),
           "default prefill": default.logits(ids), "default steps eager": stepwise(default, ids, False),
           "default steps graph": stepwise(default, ids, True)}
    keep = cops.MMVQ_EXPERTS
    cops.MMVQ_EXPERTS = frozenset()
    res["f32-experts steps"] = stepwise(default, ids, False)
    cops.MMVQ_EXPERTS = keep
    report(res, res["exact prefill"], "exact prefill")
    if a.cpu:
        t0 = time.perf_counter()
        ref = load(a.model, backend="cpu", n_ctx=256).logits(ids)
        report(res, ref, f"the NumPy backend ({time.perf_counter() - t0:.0f} s)")


def report(res: dict, ref: np.ndarray, name: str) -> None:
    print(f"reference: {name}")
    for k, v in res.items():
        print(f"{k:22} rel {rel_err(v, ref):.3e} kl {mean_kl(ref, v):.2e} | per position "
              + " ".join(f"{rel_err(v[i], ref[i]):.1e}" for i in range(len(v))), flush=True)

if __name__ == "__main__":
    main()
