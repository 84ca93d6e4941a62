"""Which CUDA path makes a model's step-by-step logits differ from its prefill logits?

    python bench/cuda_decode_diag.py MODEL.gguf [-n 8]

Loads the model twice (default numerics; exact=True with f32 KV cells), and for n random tokens
prints the max relative error and mean KL of: stepwise decode (eager, and graph-replayed) against
the teacher-forced prefill of the same mode, and each mode against the exact prefill.
"""

from __future__ import annotations

import argparse

import numpy as np

from zinc.api import load
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
    ap.add_argument("--f32-experts", action="store_true")
    a = ap.parse_args()
    from zinc.backends.cuda import ops as cops

    modes = {"default": load(a.model, backend="cuda", n_ctx=256),
             "exact": load(a.model, backend="cuda", n_ctx=256, exact=True, kv_dtype="f32")}
    if a.f32_experts:  # the default mode with the experts on f32 activations (generic matvec)
        cops.MMVQ_EXPERTS = frozenset()
    ids = [int(i) for i in np.random.default_rng(0).integers(0, modes["default"].n_vocab, a.n)]
    res = {}
    for name, m in modes.items():
        res[name + " prefill"] = m.logits(ids)
        res[name + " steps eager"] = stepwise(m, ids, False)
        res[name + " steps graph"] = stepwise(m, ids, True)
    ref = res["exact prefill"]
    for k, v in res.items():
        same = res[k.split()[0] + " prefill"]
        print(f"{k:22} vs own prefill: rel {rel_err(v, same):.3e} kl {mean_kl(same, v):.2e} | vs exact prefill: "
              f"rel {rel_err(v, ref):.3e} kl {mean_kl(ref, v):.2e} | per position rel "
              + " ".join(f"{rel_err(v[i], ref[i]):.1e}" for i in range(len(ids))), flush=True)


if __name__ == "__main__":
    main()
