"""One source tree's decode on the CUDA backend, to compare trees (run it with each tree on PYTHONPATH, in turn).

    python bench/cuda_tree_ab.py MODEL.gguf --label NAME [--out DIR] [--set NAME=INT ...]
    python bench/cuda_tree_ab.py --compare DIR/tree-A.npz DIR/tree-B.npz

On a 128-cell cache: the logits of 8 one-token decode steps after a fixed 24-token prompt (`Model.forward`, the
prompt's next ids fed in turn, so both trees see the same inputs), 64 greedy tokens after the prompt, greedy tg128
three times after an untimed one, and the GPU time of the captured greedy step (events over 100 replays). Prints one
line; writes DIR/tree-NAME.json and the logits as DIR/tree-NAME.npz. --compare prints, per step, the largest logit
difference relative to the largest logit, and whether the argmax agrees (a synthetic model's top two are often
within rounding of each other, so its greedy tokens may part where the logits agree to f32 rounding).
--set NAME=VALUE sets a constant of `zinc.backends.cuda.ops` (or MODULE.NAME of `zinc.backends.cuda.kernels.MODULE`)
first (variants of one tree; VALUE a Python literal, e.g.
ATTN_SPLITS=[(256,1,64),(4611686018427387904,32,64)]; ATTN_SPLITS also sets ATTN_SPLITS_WIDE). --depth D adds
tg128 on a cache holding D random tokens (D + 128 cells, rolled back to D before each run).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))


def compare(a: str, b: str) -> None:
    x, y = np.load(a)["logits"], np.load(b)["logits"]
    for i, (u, v) in enumerate(zip(x, y)):
        rel = float(np.abs(u - v).max() / np.abs(u).max())
        top = np.sort(u)[-2:]
        print(f"step {i}: max |diff| / max |logit| {rel:.2e}, argmax {'same' if u.argmax() == v.argmax() else 'DIFF'}"
              f" (top-2 margin {top[1] - top[0]:.4f})")


def depth_rates(m, depth: int) -> tuple[list[float], list[int]]:
    """`tg_rates` on a cache holding `depth` random tokens (rolled back to them before each run), and 16 greedy
    tokens from that cache (the same for every tree whose deep attention is right)."""
    from cuda_tg_state import tg_rates

    cache = m.new_cache(depth + 128)
    m.forward([int(i) for i in np.random.default_rng(1).integers(0, m.n_vocab, depth)], cache, last_only=True)
    rates = tg_rates(m, cache, depth=depth)
    cache.truncate(depth)
    return rates, [int(t) for t in m.greedy(1, cache, 16)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model", nargs="?")
    ap.add_argument("--label", default="tree")
    ap.add_argument("--out")
    ap.add_argument("--compare", nargs=2)
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--depth", type=int, default=0)
    a = ap.parse_args()
    if a.compare:
        compare(*a.compare)
        return
    from cuda_tg_state import replay_times, tg_rates

    from zinc.api import load
    from zinc.backends.cuda import ops

    import importlib

    for kv in a.set:
        name, value = kv.split("=", 1)
        mod, _, name = name.rpartition(".")
        mod = importlib.import_module(f"zinc.backends.cuda.kernels.{mod}") if mod else ops
        assert hasattr(mod, name), name
        setattr(mod, name, ast.literal_eval(value))
        if mod is ops and name == "ATTN_SPLITS":  # the rows of every card (not ATTN_SPLITS_WIDE's own)
            ops.ATTN_SPLITS_WIDE = ops.ATTN_SPLITS
    m = load(a.model, backend="cuda", n_ctx=max(256, a.depth + 128))
    ids = [int(i) for i in np.random.default_rng(0).integers(0, m.n_vocab, 32)]
    cache = m.new_cache(128)
    m.forward(ids[:24], cache)
    logits = np.stack([np.asarray(m.forward([t], cache, last_only=True)[-1], dtype=np.float32) for t in ids[24:]])
    cache = m.new_cache(128)
    m.forward(ids[:23], cache)
    tokens = m.greedy(ids[23], cache, 64)
    rates = tg_rates(m, cache)
    gpu_us, host_us = replay_times(m, cache)
    row = {"label": a.label, "tok_s": rates, "replay_gpu_us": gpu_us, "replay_host_us": host_us, "tokens": tokens}
    deep = ""
    if a.depth:
        row["depth"] = a.depth
        row["tok_s_depth"], row["tokens_depth"] = depth_rates(m, a.depth)
        deep = f"  tg128@d{a.depth} {np.mean(row['tok_s_depth']):7.1f} {row['tokens_depth'][-3:]}"
    print(f"{a.label:12} tg128 {np.mean(rates):7.1f} tok/s  replay {gpu_us:7.1f} us{deep}  tokens[:6] {tokens[:6]}",
          flush=True)
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        (Path(a.out) / f"tree-{a.label}.json").write_text(json.dumps(row, indent=1))
        np.savez(Path(a.out) / f"tree-{a.label}.npz", logits=logits)


if __name__ == "__main__":
    main()
