"""What a chat user's decode speed is: one request of N tokens through the engine with llama.cpp's default
sampling (temperature 0.8, top-k 40, top-p 0.95, min-p 0.05; seeded), sampling from each step's best logits
(`sampler.TopLogits`, the default) against whole rows of logits on the host, and greedy (the device-side loop)
for reference; and B such requests decoding together. Decode tok/s from the engine's request stats (B: every
request's tokens over the slowest one's decode time).

    python bench/sampled_decode.py MODEL.gguf [--backend cuda] [-n 128] [--seqs 8] [--reps 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from zinc.api import load
from zinc.engine.engine import Engine
from zinc.engine.sampler import SamplingParams


def run(model, top: int, params: SamplingParams, n_seqs: int, prompts: list[list[int]]) -> float:
    eng = Engine(model, max_running=max(1, n_seqs), top_logits=top)
    try:
        t0 = time.perf_counter()
        hs = [eng.submit(p, params) for p in prompts[:n_seqs]]
        rs = [h.result() for h in hs]
        wall = time.perf_counter() - t0
    finally:
        eng.shutdown()
    if n_seqs == 1:
        return rs[0].stats.decode_tok_s
    return sum(r.usage.completion_tokens for r in rs) / wall


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("-n", type=int, default=128)
    ap.add_argument("--seqs", type=int, default=8)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    m = load(a.model, backend=a.backend, n_ctx=512)
    rng = np.random.default_rng(0)
    prompts = [rng.integers(0, m.n_vocab, 32).tolist() for _ in range(max(1, a.seqs))]
    sampled = SamplingParams(seed=1, max_tokens=a.n, ignore_eos=True)
    greedy = SamplingParams.greedy(max_tokens=a.n, ignore_eos=True)
    rows = [("sampled, best logits", 0, sampled, 1), ("sampled, whole rows", 1, sampled, 1),
            ("greedy", 0, greedy, 1)]
    if a.seqs > 1:
        rows += [(f"{a.seqs} sampled, best logits", 0, sampled, a.seqs),
                 (f"{a.seqs} sampled, whole rows", 1, sampled, a.seqs), (f"{a.seqs} greedy", 0, greedy, a.seqs)]
    print(f"{m.path.name} on {m.ops.device_name}, {a.n} tokens a request (decode tok/s, mean +- sd of {a.reps})")
    for name, whole, params, b in rows:
        run(m, 0 if whole else 128, params, b, prompts)  # warm-up: compiles, captures
        rates = [run(m, 0 if whole else 128, params, b, prompts) for _ in range(a.reps)]
        print(f"{name:28} {statistics.fmean(rates):9.1f} +- {statistics.stdev(rates) if a.reps > 1 else 0:6.1f}",
              flush=True)


if __name__ == "__main__":
    main()
