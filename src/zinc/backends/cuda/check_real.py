"""GPU check on a real GGUF: greedy continuations on CUDA against the NumPy backend.

    python -m zinc.backends.cuda.check_real MODEL.gguf [-n 64] [--out DIR]

For each of five prompts: the prompt's tokens, then n greedy tokens chosen on the CPU backend
(host argmax of its logits) and on the CUDA backend (`Model.greedy`: the argmax of each graph-replayed
step feeds the next on the GPU), twice: with the default numerics (8-bit decode activations, f16
prefill GEMMs and KV cells) and with `exact=True` (f32 activations, f32 KV cells). Prints, per prompt
and mode, whether the continuations are equal and where they first differ (with the CPU backend's
top-1/top-2 margin there: a near tie can flip under the 8-bit activations). Exits 1 if an exact-mode
continuation differs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

PROMPTS = ["The capital of France is", "def fibonacci(n):", "The three primary colors are",
           "Water boils at a temperature", "Once upon a time, in a small village,"]


def greedy_cpu(model, ids: list[int], n: int) -> tuple[list[int], list[float]]:
    """n greedy tokens after ids on `model` one step at a time, with each step's top-2 margin."""
    cache = model.new_cache(len(ids) + n)
    logits = model.forward(ids, cache, last_only=True)[-1]
    out, margins = [], []
    for i in range(n):
        top = np.sort(logits)[-2:]
        margins.append(float(top[1] - top[0]))
        out.append(int(np.argmax(logits)))
        if i + 1 < n:
            logits = model.forward([out[-1]], cache, last_only=True)[-1]
    return out, margins


def main(argv: list[str] | None = None) -> int:
    from zinc.api import load

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("-n", type=int, default=64)
    ap.add_argument("--out", help="write check_real.json here")
    a = ap.parse_args(argv)
    cpu = load(a.model, backend="cpu", n_ctx=256)
    gpus = {"default": load(a.model, backend="cuda", n_ctx=256),
            "exact": load(a.model, backend="cuda", n_ctx=256, exact=True, kv_dtype="f32")}
    rows, ok = [], True
    for prompt in PROMPTS:
        ids = cpu.tokenize(prompt)
        want, margins = greedy_cpu(cpu, ids, a.n)
        for mode, gpu in gpus.items():
            cache = gpu.new_cache(len(ids) + a.n)
            gpu.forward(ids[:-1], cache)
            got = gpu.greedy(ids[-1], cache, a.n)  # feeds the prompt's last token, then n chosen ones
            diff = next((i for i, (x, y) in enumerate(zip(got, want)) if x != y), None)
            ok &= diff is None or mode != "exact"
            rows.append({"prompt": prompt, "mode": mode, "equal": diff is None, "first_diff": diff,
                         "margin_there": None if diff is None else margins[diff], "cpu": cpu.detokenize(want),
                         "cuda": cpu.detokenize(got)})
            print(f"{mode:8} {'equal' if diff is None else f'differs at {diff} (cpu margin {margins[diff]:.3f})':32} "
                  f"{prompt!r} -> {cpu.detokenize(want)[:60]!r}", flush=True)
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        (Path(a.out) / "check_real.json").write_text(json.dumps({"model": a.model, "n": a.n, "rows": rows}, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
