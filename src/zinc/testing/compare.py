"""Comparing a backend's numbers with a reference: relative error, logit metrics, random weights.

One copy for the GPU check scripts (`zinc.backends.cuda.profile`, `check_families`), `zinc bench`'s
verification and the tests. NumPy only.
"""

from __future__ import annotations

import numpy as np

from zinc.backends.base import QTensor
from zinc.gguf.constants import GGMLType
from zinc.gguf.quants import random_blocks


def rel_err(got, want) -> float:
    """‖got − want‖ / ‖want‖ in float64; inf when `got` holds a non-finite value."""
    a, b = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if not np.all(np.isfinite(a)):
        return float("inf")
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


def log_softmax(z: np.ndarray) -> np.ndarray:
    """log softmax over the last axis, in float64."""
    z = np.asarray(z, np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def mean_kl(ref: np.ndarray, got: np.ndarray) -> float:
    """Mean over rows of KL(softmax(ref) || softmax(got)), in nats."""
    lp, lq = log_softmax(ref), log_softmax(got)
    return float(np.mean(np.sum(np.exp(lp) * (lp - lq), -1)))


def _margins(ref: np.ndarray) -> np.ndarray:
    """Each row's top-1 minus top-2 logit."""
    srt = np.sort(ref, axis=-1)
    return srt[:, -1] - srt[:, -2]


def _sure(margins: np.ndarray, margin: float, exclude: np.ndarray | None) -> np.ndarray:
    """Rows whose top-1/top-2 margin (`_margins`) is >= margin and that `exclude` (a boolean per row) does not
    name."""
    sure = margins >= margin
    return sure if exclude is None else sure & ~np.asarray(exclude, bool)


def argmax_misses(got: np.ndarray, ref: np.ndarray, margin: float = 0.05,
                  exclude: np.ndarray | None = None) -> list[dict]:
    """The rows `compare_logits` counts against the agreement (the reference's margin >= `margin`, not excluded,
    another argmax): row, that margin, and how far got's pick is above the reference's top-1 in got."""
    m, top = _margins(ref), np.argmax(ref, -1)
    return [{"pos": int(i), "ref_margin": float(m[i]), "got_gap": float(got[i].max() - got[i, top[i]])}
            for i in np.flatnonzero(_sure(m, margin, exclude) & (np.argmax(got, -1) != top))]


def compare_logits(got: np.ndarray, ref: np.ndarray, margin: float = 0.05,
                   exclude: np.ndarray | None = None) -> dict:
    """Argmax agreement where the reference's top-1/top-2 margin is >= `margin` (and the row is not in `exclude`,
    a boolean per row: e.g. a mixture of experts' near-tied routing), how many such rows, the mean KL(ref || got)
    over every row and the relative error of (T, n_vocab) logits."""
    sure = _sure(_margins(ref), margin, exclude)
    agree = float(np.mean((np.argmax(got, -1) == np.argmax(ref, -1))[sure])) if sure.any() else 1.0
    return {"argmax_agree": agree, "n_sure": int(sure.sum()), "mean_kl": mean_kl(ref, got),
            "rel_err": rel_err(got, ref)}


def random_weight(t: GGMLType, shape: tuple[int, ...], seed: int, scale: float = 0.05) -> QTensor:
    """A weight of `shape` and type `t` with random blocks (finite scales), named w<seed>."""
    n = int(np.prod(shape))
    return QTensor(f"w{seed}", t, tuple(shape), random_blocks(t, n, np.random.default_rng(seed), scale=scale))


def prompt_cache_follow_ups(model, ref) -> dict:
    """The engine's prompt caching on `model` (a GPU backend's) against `ref` (the same file on the NumPy backend),
    for the GPU tests: a 37-id prompt p and 5 greedy tokens, then two follow-ups of 12 greedy tokens on the same
    engine, "next" (p, the reply, 9 more ids: all of the first cache kept, 37 + 4) and "cut" (p and those 9 ids: cut
    back to p where the cache can be). Each follow-up's cached prompt tokens and its largest gap below `ref`'s best
    logit at a chosen token (0 where every token is `ref`'s argmax); "p": len(p)."""
    from zinc.engine.engine import Engine
    from zinc.engine.sampler import SamplingParams

    rng = np.random.default_rng(10)
    p, tail = [int(i) for i in rng.integers(0, 500, 37)], [int(i) for i in rng.integers(0, 500, 9)]
    out: dict = {"p": len(p)}
    with Engine(model, max_running=1) as eng:
        a = eng.submit(p, SamplingParams.greedy(max_tokens=5, ignore_eos=True)).result()
        for name, follow in (("next", p + a.token_ids + tail), ("cut", p + tail)):
            b = eng.submit(follow, SamplingParams.greedy(max_tokens=12, ignore_eos=True)).result()
            logits = ref.logits(follow + b.token_ids)[len(follow) - 1:-1]
            gap = logits.max(axis=1) - logits[np.arange(len(b.token_ids)), b.token_ids]
            out[name] = {"cached": b.usage.cached_tokens, "gap": float(gap.max())}
    return out
