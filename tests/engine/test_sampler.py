"""Sampler tests: each option changes the distribution as llama.cpp specifies (exact reference
distributions plus fixed-seed chi-square checks of the draws), seeds reproduce, penalties match the
reference formula, logprobs, and stop strings split across tokens."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from zinc.engine.sampler import (
    Sampler, SamplingParams, StopChecker, StopMatcher, apply_penalties, log_softmax,
)

OFF = dict(top_k=0, top_p=1.0, min_p=0.0)  # every truncation off


def softmax(x):
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max())
    return e / e.sum()


def draw_counts(sampler, logits, n, history=()):
    counts = np.zeros(sampler.n_vocab)
    for _ in range(n):
        t, _ = sampler.sample(logits, history)
        counts[t] += 1
    return counts


def chi_square_ok(counts, probs):
    """Pearson chi-square of the draws against probs; bins with expectation < 5 are merged."""
    n = counts.sum()
    exp = probs * n
    assert counts[probs == 0].sum() == 0, "drew a token whose probability is 0"
    big = exp >= 5
    obs_b = list(counts[big]) + ([counts[~big & (probs > 0)].sum()] if (~big & (probs > 0)).any() else [])
    exp_b = list(exp[big]) + ([exp[~big & (probs > 0)].sum()] if (~big & (probs > 0)).any() else [])
    stat = sum((o - e) ** 2 / e for o, e in zip(obs_b, exp_b) if e > 0)
    df = max(len(obs_b) - 1, 1)
    limit = df + 6 * math.sqrt(2 * df) + 10  # far in the tail: p < 1e-6 for these df
    return stat < limit, stat, limit


LOGITS = np.array([2.0, 1.5, 1.0, 0.2, -0.5, -1.0, -3.0, 0.7], dtype=np.float32)


# -- the exact distribution of each option ------------------------------------------------------

def test_temperature_scales_logits():
    for t in (0.3, 1.0, 2.5):
        s = Sampler(SamplingParams(temperature=t, **OFF), len(LOGITS))
        np.testing.assert_allclose(s.probabilities(LOGITS), softmax(LOGITS.astype(np.float64) / t), rtol=1e-12)
    cold = Sampler(SamplingParams(temperature=0.3, **OFF), 8).probabilities(LOGITS)
    hot = Sampler(SamplingParams(temperature=2.5, **OFF), 8).probabilities(LOGITS)
    assert cold.max() > hot.max()


def test_top_k_keeps_k_best():
    s = Sampler(SamplingParams(temperature=1.0, top_k=3, top_p=1.0, min_p=0.0), 8)
    p = s.probabilities(LOGITS)
    best = np.argsort(-LOGITS)[:3]
    ref = np.zeros(8)
    ref[best] = softmax(LOGITS[best])
    np.testing.assert_allclose(p, ref, rtol=1e-12)


def reference_top_p(logits, p):
    probs = softmax(logits)
    order = np.argsort(-probs, kind="stable")
    cum = np.cumsum(probs[order])
    last = int(np.nonzero(cum >= p)[0][0]) + 1
    out = np.zeros_like(probs)
    out[order[:last]] = softmax(logits[order[:last]])
    return out


def test_top_p_keeps_nucleus():
    for p in (0.3, 0.6, 0.9, 0.99):
        s = Sampler(SamplingParams(temperature=1.0, top_k=0, top_p=p, min_p=0.0), 8)
        np.testing.assert_allclose(s.probabilities(LOGITS), reference_top_p(LOGITS, p), rtol=1e-12)


def test_top_p_large_vocab_fast_path_matches_reference():
    rng = np.random.default_rng(1)
    for scale in (8.0, 0.1):  # peaked (nucleus in the best 256) and flat (falls back to a full sort)
        logits = rng.normal(size=50_000) * scale
        s = Sampler(SamplingParams(temperature=1.0, top_k=0, top_p=0.9, min_p=0.0), logits.size)
        np.testing.assert_allclose(s.probabilities(logits), reference_top_p(logits, 0.9), atol=1e-12)


def test_min_p_relative_to_best():
    s = Sampler(SamplingParams(temperature=1.0, top_k=0, top_p=1.0, min_p=0.3), 8)
    probs = softmax(LOGITS)
    keep = probs >= 0.3 * probs.max()
    ref = np.zeros(8)
    ref[keep] = softmax(LOGITS[keep])
    np.testing.assert_allclose(s.probabilities(LOGITS), ref, rtol=1e-12)


def test_min_keep_holds_truncation_back():
    s = Sampler(SamplingParams(temperature=1.0, top_k=0, top_p=0.01, min_p=0.0, min_keep=3), 8)
    assert np.count_nonzero(s.probabilities(LOGITS)) == 3
    s = Sampler(SamplingParams(temperature=1.0, top_k=0, top_p=1.0, min_p=0.99, min_keep=4), 8)
    assert np.count_nonzero(s.probabilities(LOGITS)) == 4


def test_chain_order_truncation_before_temperature():
    """llama.cpp order: top-k → top-p → min-p → temperature; the kept set ignores temperature."""
    sets = []
    for t in (0.05, 1.0, 20.0):
        s = Sampler(SamplingParams(temperature=t, top_k=6, top_p=0.8, min_p=0.1), 8)
        sets.append(frozenset(np.nonzero(s.probabilities(LOGITS))[0].tolist()))
    assert sets[0] == sets[1] == sets[2]
    probs = softmax(LOGITS)
    top6 = np.argsort(-probs)[:6]
    ref = reference_top_p(np.where(np.isin(np.arange(8), top6), LOGITS, -np.inf), 0.8)
    kept = ref > 0
    kept &= ref >= 0.1 * ref.max()
    assert sets[0] == frozenset(np.nonzero(kept)[0].tolist())


def test_logit_bias_adds_and_bans():
    s = Sampler(SamplingParams(temperature=1.0, logit_bias={3: 2.5, 0: -math.inf}, **OFF), 8)
    ref = LOGITS.astype(np.float64).copy()
    ref[3] += 2.5
    ref[0] = -np.inf
    np.testing.assert_allclose(s.probabilities(LOGITS), softmax(ref), rtol=1e-12)
    # string keys (as JSON sends them) are accepted
    assert SamplingParams(logit_bias={"5": 1.0}).logit_bias == ((5, 1.0),)
    g = Sampler(SamplingParams.greedy(logit_bias={6: 100.0}), 8)
    assert g.sample(LOGITS)[0] == 6


def test_greedy_is_argmax_first_on_ties():
    s = Sampler(SamplingParams.greedy(), 8)
    assert s.sample(LOGITS)[0] == 0
    tie = np.array([0.0, 3.0, 1.0, 3.0], dtype=np.float32)
    assert Sampler(SamplingParams.greedy(), 4).sample(tie)[0] == 1
    # penalties still apply before the argmax
    p = SamplingParams.greedy(repeat_penalty=2.0)
    assert Sampler(p, 8).sample(LOGITS, history=[0])[0] == 1


# -- penalties against the reference formula ----------------------------------------------------

def reference_penalties(logits, history, last_n, rep, freq, pres):
    out = [float(v) for v in logits]
    window = history if last_n < 0 else history[-last_n:] if last_n else []
    for tok, c in Counter(window).items():
        v = out[tok]
        v = v * rep if v <= 0 else v / rep
        out[tok] = v - (c * freq + (1.0 if c > 0 else 0.0) * pres)
    return np.array(out)


@pytest.mark.parametrize("last_n", [-1, 0, 1, 16, 64])
def test_penalties_match_reference(last_n):
    rng = np.random.default_rng(last_n + 10)
    for _ in range(20):
        logits = rng.normal(scale=3.0, size=100)
        history = rng.integers(0, 100, size=int(rng.integers(0, 120))).tolist()
        rep, freq, pres = float(rng.uniform(0.5, 2.0)), float(rng.uniform(-1, 1)), float(rng.uniform(-1, 1))
        p = SamplingParams(repeat_penalty=rep, frequency_penalty=freq, presence_penalty=pres, penalty_last_n=last_n)
        got = logits.copy()
        apply_penalties(got, history, p)
        np.testing.assert_allclose(got, reference_penalties(logits, history, last_n, rep, freq, pres), rtol=1e-12)
        s = Sampler(p, 100)
        np.testing.assert_allclose(s.transform(logits, history), got, rtol=1e-12)


def test_penalties_change_distribution():
    hist = [0, 0, 1]
    base = Sampler(SamplingParams(temperature=1.0, **OFF), 8).probabilities(LOGITS, hist)
    pen = Sampler(SamplingParams(temperature=1.0, frequency_penalty=0.5, presence_penalty=0.3, **OFF), 8)
    p = pen.probabilities(LOGITS, hist)
    ref = LOGITS.astype(np.float64).copy()
    ref[0] -= 2 * 0.5 + 0.3
    ref[1] -= 1 * 0.5 + 0.3
    np.testing.assert_allclose(p, softmax(ref), rtol=1e-12)
    assert p[0] < base[0] and p[1] < base[1] and p[2] > base[2]


# -- draws follow the distribution (fixed seeds: deterministic) ---------------------------------

@pytest.mark.parametrize("params", [
    SamplingParams(temperature=1.0, seed=1, **OFF),
    SamplingParams(temperature=0.5, seed=2, **OFF),
    SamplingParams(temperature=2.0, seed=3, **OFF),
    SamplingParams(temperature=1.0, top_k=3, top_p=1.0, min_p=0.0, seed=4),
    SamplingParams(temperature=1.0, top_k=0, top_p=0.8, min_p=0.0, seed=5),
    SamplingParams(temperature=1.0, top_k=0, top_p=1.0, min_p=0.2, seed=6),
    SamplingParams(temperature=0.8, seed=7),  # llama.cpp's default chain
    SamplingParams(temperature=1.0, logit_bias={7: 1.5}, frequency_penalty=0.4, seed=8, **OFF),
])
def test_draws_follow_distribution(params):
    s = Sampler(params, len(LOGITS))
    hist = [7, 7, 2]
    probs = s.probabilities(LOGITS, hist)
    ok, stat, limit = chi_square_ok(draw_counts(s, LOGITS, 20_000, hist), probs)
    assert ok, f"chi-square {stat:.1f} >= {limit:.1f}"


def test_seed_reproduces_and_differs():
    rng = np.random.default_rng(0)
    steps = [rng.normal(size=1000).astype(np.float32) for _ in range(100)]

    def run(seed):
        s = Sampler(SamplingParams(temperature=1.2, top_k=0, top_p=0.97, min_p=0.0,
                                   repeat_penalty=1.1, seed=seed), 1000)
        out = []
        for lg in steps:
            out.append(s.sample(lg, out)[0])
        return out

    assert run(42) == run(42)
    assert run(42) != run(43)


# -- logprobs -----------------------------------------------------------------------------------

def test_logprobs_are_raw_model_distribution():
    p = SamplingParams(temperature=1.5, logit_bias={4: 3.0}, logprobs=True, top_logprobs=3, seed=0)
    s = Sampler(p, 8)
    tok, info = s.sample(LOGITS)
    lp = np.log(softmax(LOGITS))
    assert info.token == tok
    assert info.logprob == pytest.approx(lp[tok], abs=1e-12)
    assert [t for t, _ in info.top] == np.argsort(-LOGITS)[:3].tolist()
    for t, v in info.top:
        assert v == pytest.approx(lp[t], abs=1e-12)
    assert Sampler(SamplingParams(), 8).sample(LOGITS)[1] is None
    np.testing.assert_allclose(np.exp(log_softmax(LOGITS)).sum(), 1.0)


# -- validation ---------------------------------------------------------------------------------

@pytest.mark.parametrize("kw, field", [
    (dict(temperature=-0.1), "temperature"), (dict(temperature=float("nan")), "temperature"),
    (dict(top_p=1.5), "top_p"), (dict(min_p=-0.1), "min_p"), (dict(top_k=2.5), "top_k"),
    (dict(repeat_penalty=0.0), "repeat_penalty"), (dict(penalty_last_n=-2), "penalty_last_n"),
    (dict(seed=-1), "seed"), (dict(max_tokens=0), "max_tokens"), (dict(top_logprobs=-1), "top_logprobs"),
    (dict(logit_bias={"x": 1.0}), "logit_bias"), (dict(logit_bias={1: math.inf}), "logit_bias"),
    (dict(stop=[""]), "stop"), (dict(stop=[3]), "stop"), (dict(stop_token_ids=[-1]), "stop_token_ids"),
    (dict(frequency_penalty="1"), "frequency_penalty"),
])
def test_validation_names_field(kw, field):
    with pytest.raises(ValueError, match=rf"SamplingParams\.{field}"):
        SamplingParams(**kw)


def test_sampler_checks_vocab_and_logits():
    with pytest.raises(ValueError, match="logit_bias"):
        Sampler(SamplingParams(logit_bias={8: 1.0}), 8)
    s = Sampler(SamplingParams(), 8)
    with pytest.raises(ValueError, match="entries"):
        s.sample(np.zeros(9, dtype=np.float32))
    with pytest.raises(ValueError, match="NaN"):
        s.sample(np.full(8, np.nan, dtype=np.float32))
    with pytest.raises(ValueError, match="history"):
        Sampler(SamplingParams(repeat_penalty=1.1), 8).sample(LOGITS, [8])
    banned = SamplingParams(temperature=1.0, logit_bias={i: -math.inf for i in range(8)})
    with pytest.raises(ValueError, match="-inf"):
        Sampler(banned, 8).sample(LOGITS)
    assert SamplingParams(stop="###").stop == ("###",)


# -- stop strings -------------------------------------------------------------------------------

def feed(matcher, pieces):
    out = []
    for p in pieces:
        text, stopped = matcher.push(p)
        out.append(text)
        if stopped:
            return "".join(out), True
    return "".join(out) + matcher.flush(), False


def test_stop_string_split_across_tokens():
    m = StopMatcher(["World"])
    assert m.push("Hello ") == ("Hello ", False)
    assert m.push("Wo") == ("", False)  # held back: could be the stop string
    assert m.held == "Wo"
    assert m.push("rl") == ("", False)
    assert m.push("d!") == ("", True)  # the stop text is never emitted
    assert m.matched == "World" and m.flush() == ""
    assert m.push("more") == ("", True)


def test_held_text_released_when_it_cannot_match():
    m = StopMatcher(["</end>"])
    assert m.push("a </e") == ("a ", False)
    assert m.push("x") == ("</ex", False)
    assert m.push("<") == ("", False)
    assert m.flush() == "<"


def test_earliest_of_several_stops_wins():
    assert feed(StopMatcher(["cd", "b"]), ["a", "bcd"]) == ("a", True)
    assert feed(StopMatcher(["xyz", "yz1"]), ["0x", "y", "z1"]) == ("0", True)
    assert feed(StopMatcher(["aab"]), ["a", "a", "a", "b", "c"]) == ("a", True)


def test_stop_matcher_random_splits():
    rng = np.random.default_rng(3)
    alphabet = list("ab<>/")
    stops = ["</a>", "bb", "<<a"]
    for _ in range(300):
        text = "".join(rng.choice(alphabet, size=int(rng.integers(0, 30))))
        cuts = sorted(rng.choice(np.arange(1, max(len(text), 2)), size=min(4, max(len(text) - 1, 0)), replace=False)) \
            if len(text) > 1 else []
        pieces = [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)])]
        positions = [p for p in (text.find(s) for s in stops) if p >= 0]
        expect = (text[:min(positions)], True) if positions else (text, False)
        assert feed(StopMatcher(stops), pieces) == expect, (text, pieces)


def test_stop_checker_eog_max_tokens_and_stop():
    c = StopChecker(SamplingParams(max_tokens=3), eog_ids=[2])
    assert c.step(5, "a") == ("a", None)
    assert c.step(2, "<eos>") == ("", "stop")
    c = StopChecker(SamplingParams(max_tokens=2, stop=["zz"]), eog_ids=[2])
    assert c.step(5, "z") == ("", None)
    assert c.step(6, "q") == ("zq", "length")
    c = StopChecker(SamplingParams(ignore_eos=True, stop_token_ids=[9]), eog_ids=[2])
    assert c.step(2, "x") == ("x", None)
    assert c.step(9, "y") == ("", "stop")
    c = StopChecker(SamplingParams(stop=["\n\n"]), eog_ids=[])
    assert c.step(1, "line\n") == ("line", None)
    assert c.step(1, "\nnext") == ("", "stop")
    c = StopChecker(SamplingParams(stop=["END"]), eog_ids=[])
    assert c.step(1, "xE") == ("x", None)
    assert c.finish("cancelled") == "E" and c.finish_reason == "cancelled"


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_or_plus_inf_logits_are_refused(bad):
    x = np.random.default_rng(3).standard_normal(37).astype(np.float32)
    x[11] = bad
    for params in (SamplingParams.greedy(), SamplingParams(temperature=0.8, seed=1)):
        with pytest.raises(ValueError, match="NaN or \\+inf"):
            Sampler(params, 37).sample(x)
    x[11] = -np.inf  # -inf is a masked token, not an error
    assert Sampler(SamplingParams.greedy(), 37).sample(x)[0] != 11


# -- sampling from a row's best logits (TopLogits) ----------------------------------------------

def top_of(row, k):
    """`TopLogits` of a host row (through the NumPy backend's `top_logits`), counting fetches of the whole row."""
    from zinc.backends.cpu import CpuOps
    from zinc.engine.sampler import TopLogits

    vals, ids, lse = CpuOps().top_logits(row[None], k)
    fetched = []

    def full():
        fetched.append(1)
        return row
    return TopLogits(ids[0], vals[0].astype(np.float64), float(lse[0]), row.size, full), fetched


TOP_CASES = [  # params, whether the best 128 suffice (no fetch of the whole row)
    (dict(), True),
    (dict(top_k=40, repeat_penalty=1.3, frequency_penalty=0.2, presence_penalty=0.1), True),
    (dict(top_k=5, top_p=0.5, min_p=0.2, logit_bias={7: -2.0, 4000: -np.inf}), True),
    (dict(temperature=0.0, repeat_penalty=1.5), True),
    (dict(top_k=40, logprobs=True, top_logprobs=5), True),
    (dict(top_k=0), False),  # no top-k cut: any token may be a candidate
    (dict(top_k=40, logit_bias={4321: 30.0}), False),  # a positive bias may lift a token from outside
    (dict(top_k=40, repeat_penalty=0.5), False),  # a penalty that raises history tokens outside
    (dict(top_k=128), False),  # top-k no narrower than what came back
]


@pytest.mark.parametrize("kw,sparse", TOP_CASES)
def test_top_logits_sample_as_the_whole_row(kw, sparse):
    """A row's best 128 logits (`TopLogits`) give the tokens (and logprobs) of the whole row with the same seed,
    fetching the whole row only where a token outside them could be a candidate."""
    rng = np.random.default_rng(5)
    n_vocab = 6007
    history = rng.integers(0, n_vocab, 90).tolist()
    params = SamplingParams(seed=17, **kw)
    whole, top = Sampler(params, n_vocab), Sampler(params, n_vocab)
    fetches = 0
    for step in range(60):
        row = (rng.standard_normal(n_vocab) * 2.5).astype(np.float32)
        row[history[-20:]] += 4.0  # the penalised tokens among the best
        t, fetched = top_of(row, 128)
        want, got = whole.sample(row, history), top.sample(t, history)
        assert got[0] == want[0], (step, got, want)
        if params.logprobs:
            assert [t for t, _ in got[1].top] == [t for t, _ in want[1].top]
            assert [v for _, v in got[1].top] == pytest.approx([v for _, v in want[1].top], abs=1e-5)
            assert got[1].logprob == pytest.approx(want[1].logprob, abs=1e-5)
        fetches += len(fetched)
        history.append(got[0])
    assert (fetches == 0) == sparse, fetches


def test_top_logits_of_a_small_vocabulary_and_bad_rows():
    """Every token came back (k >= n_vocab): any settings sample as the whole row without fetching it; a row
    with NaN or +inf is fetched and refused as a row is."""
    rng = np.random.default_rng(6)
    for kw in (dict(top_k=0), dict(top_k=0, top_p=0.9, min_p=0.0, logit_bias={3: 2.0}), dict(repeat_penalty=0.7)):
        params = SamplingParams(seed=3, **kw)
        whole, top = Sampler(params, 50), Sampler(params, 50)
        for _ in range(40):
            row = rng.standard_normal(50).astype(np.float32)
            t, fetched = top_of(row, 128)
            assert top.sample(t, [1, 2, 3])[0] == whole.sample(row, [1, 2, 3])[0] and not fetched
    row = rng.standard_normal(50).astype(np.float32)
    row[9] = np.nan
    with pytest.raises(ValueError, match="NaN or \\+inf"):
        Sampler(SamplingParams(seed=1), 50).sample(top_of(row, 8)[0])


def test_draws_ahead_and_put_back():
    """`draw_ahead(n)` gives the next n draws `sample` would make; after `drew(m)` the generator goes on from the
    (m+1)-th. Greedy draws nothing. `device_row` only for the settings a device sampler takes (top-k within the
    best 128, or off with top-p off: the whole row)."""
    s, ref = Sampler(SamplingParams(seed=9), 50), np.random.default_rng(9)
    want = ref.random(8)
    assert np.array_equal(s.draw_ahead(5), want[:5])
    s.drew(2)
    assert np.array_equal(s.draw_ahead(3), want[2:5])
    s.drew(3)
    assert s.rng.random() == want[5]
    g = Sampler(SamplingParams.greedy(seed=9), 50)
    assert not g.draw_ahead(4).any() and g.rng.random() == want[0]
    assert Sampler(SamplingParams(), 50).device_row() == (0.8, 40, 0.95, 0.05, 1)
    assert g.device_row() == (0.0, 1, 1.0, 0.0, 1)
    for p in (SamplingParams(top_k=0), SamplingParams(top_k=129), SamplingParams(logprobs=True),
              SamplingParams(logit_bias={3: 1.0}), SamplingParams(repeat_penalty=1.1),
              SamplingParams(presence_penalty=0.2), SamplingParams(top_k=60)):
        assert Sampler(p, 5000 if p.top_k != 60 else 50).device_row() is None, p
    assert Sampler(SamplingParams(repeat_penalty=1.1, penalty_last_n=0), 50).device_row() is not None
    openai = SamplingParams(temperature=1.0, top_k=0, top_p=1.0, min_p=0.0)  # the whole row
    assert Sampler(openai, 5000).device_row() == (1.0, 0, 1.0, 0.0, 1)
    assert Sampler(SamplingParams(top_k=0, top_p=1.0, min_p=0.1, min_keep=3), 50).device_row() is None
