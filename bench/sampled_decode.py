"""What a chat user's decode speed is: one request of N tokens through the engine with llama.cpp's default
sampling (temperature 0.8, top-k 40, top-p 0.95, min-p 0.05; seeded) drawn on the device in chunks of 8 steps, each
chunk's successor launched before it is read (`Model.start_seqs`, the engine's default), the same with each chunk
read before the next is launched, each step's best logits sampled on the host (`sampler.TopLogits`), whole rows of
logits sampled on the host; greedy (the device-side loop) both ways for reference; and B such requests decoding
together. Decode tok/s from the engine's request stats (B: every request's tokens over the wall time), each row's engine
warmed by one run first (a server's steady state: its spare caches, and the graphs captured on them, reused).

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


def engine(model, way: str, n_seqs: int) -> Engine:
    return Engine(model, max_running=max(1, n_seqs), top_logits=0 if way == "rows" else 128,
                  device_sampling=way.startswith("device"), chunks_ahead=way != "device, read first")


def run(eng: Engine, params: SamplingParams, n_seqs: int, prompts: list[list[int]]) -> float:
    t0 = time.perf_counter()
    hs = [eng.submit(p, params) for p in prompts[:n_seqs]]
    rs = [h.result() for h in hs]
    wall = time.perf_counter() - t0
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
    rows = []
    for b in sorted({1, max(1, a.seqs)}):
        rows += [(f"{b} sampled, on the device", "device", sampled, b),
                 (f"{b} sampled, device, no chunk ahead", "device, read first", sampled, b),
                 (f"{b} sampled, best logits, host", "top", sampled, b),
                 (f"{b} sampled, whole rows, host", "rows", sampled, b), (f"{b} greedy", "device", greedy, b),
                 (f"{b} greedy, no chunk ahead", "device, read first", greedy, b)]
    print(f"{m.path.name} on {m.ops.device_name}, {a.n} tokens a request (decode tok/s, mean +- sd of {a.reps})")
    for name, way, params, b in rows:
        eng = engine(m, way, b)  # one engine a row, as a server's: its caches (and their graphs) reused
        try:
            run(eng, params, b, prompts)  # warm-up: compiles, captures
            rates = [run(eng, params, b, prompts) for _ in range(a.reps)]
        finally:
            eng.shutdown()
        print(f"{name:36} {statistics.fmean(rates):9.1f} +- {statistics.stdev(rates) if a.reps > 1 else 0:6.1f}",
              flush=True)


if __name__ == "__main__":
    main()
