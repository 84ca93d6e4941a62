"""Requests one after another through the engine on the CUDA backend: does each one pay for new step graphs?

    python bench/cuda_engine_reuse.py MODEL.gguf [--requests 4] [--prompt 40] [--tokens 64] [--fresh] [--profile]
        [--greedy-chunk N] [--chat N] [--no-prompt-cache] [--backend cuda] [--out DIR]

Each request: a prompt of --prompt random ids, --tokens greedy tokens (end of generation ignored). Per request: time
to first token, decode tok/s (as the server decodes: by default greedy chunks of `Engine.greedy_chunk` tokens a step
on the device; --greedy-chunk 1: the host samples each token), graphs captured so far. --fresh: every
request a new cache (the engine before session 19) instead of a finished one's, reset. --profile: the host's
time in the last request by function (cProfile, the 30 largest cumulative). Prompt caching is off (each request
computes its whole prompt) unless --chat N: then each request after the first is the one before, its reply and N
more random ids (a chat's next turn), computed from the finished request's cache of it (--no-prompt-cache: afresh);
the time to first token shows what the cache saves. JSON under --out.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
from pathlib import Path

import numpy as np

from zinc.api import load
from zinc.engine.engine import Engine
from zinc.engine.sampler import SamplingParams


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--requests", type=int, default=4)
    ap.add_argument("--prompt", type=int, default=40)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--fresh", action="store_true")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--greedy-chunk", type=int, help="Engine(greedy_chunk=...); default: the engine's own")
    ap.add_argument("--chat", type=int, default=0, metavar="N")
    ap.add_argument("--no-prompt-cache", action="store_true")
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--out")
    a = ap.parse_args()
    m = load(a.model, backend=a.backend, n_ctx=16384 if a.chat else 4096)
    eng = Engine(m, max_running=1, greedy_chunk=a.greedy_chunk)
    if a.fresh:
        eng._cache_for = lambda req: m.new_cache(req.n_ctx)
    rng = np.random.default_rng(0)
    ids = rng.integers(100, m.n_vocab - 100, a.prompt).tolist()
    cache_prompt = bool(a.chat) and not a.no_prompt_cache
    rows = []
    for i in range(a.requests):
        prof = cProfile.Profile() if a.profile and i == a.requests - 1 else None
        if prof:
            prof.enable()
        r = eng.submit(ids, SamplingParams(temperature=0.0, max_tokens=a.tokens, ignore_eos=True),
                       cache_prompt=cache_prompt).result()
        if prof:
            prof.disable()
            pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
        st = r.stats
        graphs = getattr(m.ops, "_graphs", None)
        row = {"request": i, "prompt_tokens": r.usage.prompt_tokens, "cached_tokens": r.usage.cached_tokens,
               "ttft_ms": st.ttft_s * 1e3, "decode_tok_s": (st.generated_tokens - 1) / st.decode_s,
               "graphs_captured": graphs.captures if graphs else None, "tokens": r.token_ids[:8]}
        rows.append(row)
        print(f"{'fresh' if a.fresh else 'reused'} request {i}: prompt {row['prompt_tokens']} ({row['cached_tokens']} "
              f"cached), ttft {row['ttft_ms']:7.1f} ms, decode {row['decode_tok_s']:6.1f} tok/s, graphs captured "
              f"{row['graphs_captured']}", flush=True)
        if a.chat:
            ids = ids + r.token_ids + rng.integers(100, m.n_vocab - 100, a.chat).tolist()
    eng.shutdown()
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        chat = f"-chat-{'cached' if cache_prompt else 'uncached'}" if a.chat else ""
        (Path(a.out) / f"engine-{'fresh' if a.fresh else 'reused'}{chat}.json").write_text(
            json.dumps({"model": a.model, "backend": a.backend, "prompt": a.prompt, "tokens": a.tokens,
                        "greedy_chunk": eng.greedy_chunk, "chat": a.chat, "cache_prompt": cache_prompt,
                        "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
