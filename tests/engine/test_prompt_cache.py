"""Prompt caching in the engine: a request starts from the longest prefix of its prompt that a finished
request's cache holds, on attention caches (any prefix), recurrent state (only all of it) and sliding-window
rings (only while the window before the cut is still there); the tokens and their log-probabilities equal
those of the whole prompt computed afresh; `cache_prompt=False` computes it all; `KVCache.truncate`'s rules."""

from __future__ import annotations

import numpy as np
import pytest

from zinc.api import load
from zinc.engine.engine import Engine
from zinc.engine.sampler import SamplingParams
from zinc.errors import ZincError
from zinc.synth import write_model

TEXT = "Once upon a time, a small fox found a lantern by the river and carried it home. "
FAMILIES = ["qwen3-tiny", "qwen35-tiny", "gemma3-tiny"]  # attention, recurrent + attention, sliding window (16)


@pytest.fixture(scope="module", params=FAMILIES)
def model(request, tmp_path_factory):
    path = write_model(tmp_path_factory.mktemp("m") / f"{request.param}.gguf", request.param, ftype="Q8_0").path
    m = load(path, n_ctx=256, n_ubatch=8)  # gemma3-tiny's rings: 16 + 8 - 1 cells
    yield m
    m.close()


def _greedy(n: int) -> SamplingParams:
    return SamplingParams.greedy(max_tokens=n, ignore_eos=True, logprobs=True)


def _run(eng: Engine, ids: list[int], n: int, **kw):
    return eng.submit(ids, _greedy(n), **kw).result()


def _fresh(model, ids: list[int], n: int):
    eng = Engine(model, max_running=1)
    try:
        return _run(eng, ids, n)
    finally:
        eng.shutdown()


def _same_as_fresh(model, r, ids: list[int], n: int) -> None:
    want = _fresh(model, ids, n)
    assert r.token_ids == want.token_ids
    got_lp = np.array([t.logprob for t in r.logprobs])
    want_lp = np.array([t.logprob for t in want.logprobs])
    assert np.abs(got_lp - want_lp).max() < 1e-3


def test_follow_up_starts_after_the_cached_conversation(model):
    """A chat's next turn: the prompt is the last prompt, its reply and more; every family keeps all of the
    cache (prompt + reply but its last token, which was never fed back)."""
    p = model.tokenize(TEXT)
    with Engine(model, max_running=2) as eng:
        a = _run(eng, p, 8)
        assert a.usage.cached_tokens == 0
        b_ids = p + a.token_ids + model.tokenize(" The lantern", add_special=False)
        b = _run(eng, b_ids, 6)
        assert b.usage.cached_tokens == len(p) + 7 and b.usage.prompt_tokens == len(b_ids)
        assert b.stats.cached_tokens == len(p) + 7 and f"({len(p) + 7} cached)" in b.stats.summary()
        assert b.stats.prefill_tok_s == pytest.approx((len(b_ids) - len(p) - 7) / b.stats.prefill_s)
    _same_as_fresh(model, b, b_ids, 6)


def test_same_prompt_again_computes_only_its_last_token(model):
    p = model.tokenize(TEXT)
    with Engine(model, max_running=1) as eng:
        a = _run(eng, p, 5)
        b = _run(eng, p, 5)
        assert b.usage.cached_tokens == (len(p) - 1 if model.config.arch != "qwen35" else 0)
    assert b.token_ids == a.token_ids
    _same_as_fresh(model, b, p, 5)


@pytest.mark.parametrize("n_gen", [8, 12])
def test_diverging_prompt_keeps_what_it_can(model, n_gen):
    """The next prompt shares only the first prompt: attention caches cut back to it; recurrent state cannot
    be cut (computed afresh); the sliding-window rings (23 cells, window 16) can lose at most 7 tokens."""
    p = model.tokenize(TEXT)
    with Engine(model, max_running=1) as eng:
        a = _run(eng, p, n_gen)
        tail = next(t for t in (model.tokenize(w, add_special=False) for w in ("Rain fell.", "Snow fell."))
                    if t[0] != a.token_ids[0])
        b = _run(eng, p + tail, 6)
    lost = n_gen - 1  # tokens of the cache past the shared prefix
    want = {"qwen3": len(p), "qwen35": 0, "gemma3": len(p) if lost <= 7 else 0}[model.config.arch]
    assert b.usage.cached_tokens == want
    _same_as_fresh(model, b, p + tail, 6)


def test_best_spare_is_chosen_and_opt_out(model):
    """Of several finished requests' caches the one sharing most of the prompt is taken; `cache_prompt=False`
    takes none (the whole prompt computed, as a fresh engine does)."""
    p1, p2 = model.tokenize(TEXT), model.tokenize("Zebras " * 9)
    with Engine(model, max_running=2) as eng:
        h1, h2 = eng.submit(p1, _greedy(4)), eng.submit(p2, _greedy(4))  # together: two caches
        a1, _ = h1.result(), h2.result()
        assert eng.n_spare == 2
        c_ids = p1 + a1.token_ids
        c = _run(eng, c_ids, 4)
        assert c.usage.cached_tokens == len(p1) + 3
        d = _run(eng, c_ids, 4, cache_prompt=False)
        assert d.usage.cached_tokens == 0
        assert d.token_ids == _fresh(model, c_ids, 4).token_ids
        assert eng.n_spare == 2  # the least recently finished dropped


def test_truncate_rules(model):
    cache = model.new_cache(64)
    ids = model.tokenize(TEXT)[:20]
    model.forward(ids[:8], cache)
    model.forward(ids[8:16], cache)
    model.forward(ids[16:20], cache)
    assert cache.n_past == 20
    with pytest.raises(ValueError, match="cannot truncate to 21 tokens: the cache holds 20"):
        cache.truncate(21)
    arch = model.config.arch
    if arch == "qwen35":
        assert "recurrent state" in cache.truncate_problem(10)
        with pytest.raises(ZincError, match="recurrent state"):
            cache.truncate(10)
    elif arch == "gemma3":
        assert cache.truncate_problem(13) is None  # 20 - 23 <= 13 - 16
        assert "sliding-window" in cache.truncate_problem(2)  # the ring lost position 2's window
    else:
        assert cache.truncate_problem(1) is None
    keep = {"qwen35": 20, "gemma3": 13}.get(arch, 5)
    cache.truncate(keep)
    assert cache.n_past == keep
    # what follows the cut equals a cache that never held more
    want_cache = model.new_cache(64)
    want = model.forward(ids[:keep] + ids[:3], want_cache)[-1]
    got = model.forward(ids[:3], cache)[-1]
    np.testing.assert_allclose(model.ops.to_numpy(got), model.ops.to_numpy(want), rtol=1e-4, atol=1e-4)
    cache.truncate(0)
    assert cache.n_past == 0


def test_tokens_past_a_stop_are_not_reused(model):
    """Greedy chunks (one loop of 7 tokens after the prompt's) run past a stop string; the cache then holds
    tokens the request never returned: a follow-up keeps only the returned ones (recurrent state: none)."""
    p = model.tokenize(TEXT)
    g = _fresh(model, p, 8).token_ids
    with Engine(model, max_running=1, greedy_chunk=8) as eng:
        a = eng.submit(p, SamplingParams.greedy(max_tokens=8, stop=[model.detokenize(g[:2])])).result()
        k = len(a.token_ids)  # 2, or more where those two tokens end inside a character
        assert a.token_ids == g[:k] and k < 6 and a.finish_reason == "stop"
        assert eng._spare[0].cache.n_past == len(p) + 7  # the loop wrote past the stop
        b_ids = p + g[:k] + model.tokenize("Rain fell.", add_special=False)
        b = _run(eng, b_ids, 5)
    assert b.usage.cached_tokens == (0 if model.config.arch == "qwen35" else len(p) + k)
    _same_as_fresh(model, b, b_ids, 5)
