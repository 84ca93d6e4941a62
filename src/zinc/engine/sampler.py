"""Token sampling, stop conditions and per-token logprobs for one request.

`SamplingParams` holds a request's settings (validated; a ValueError names the field at fault).
`Sampler(params, n_vocab).sample(logits, history)` picks the next token. The transforms apply in
llama.cpp's default chain order (common/sampling.cpp), and use its formulas:

1. logit bias: ``logit[t] += bias[t]`` (``-inf`` bans a token).
2. penalties over the last ``penalty_last_n`` tokens of ``history`` (``-1``: all of it, ``0``: none);
   ``history`` is the sequence so far, prompt included (llama-server feeds the prompt to its
   penalty window too).
   For every token t seen c > 0 times there:
   ``logit = logit * repeat_penalty if logit <= 0 else logit / repeat_penalty``, then
   ``logit -= c * frequency_penalty + presence_penalty``.
3. top-k: keep the k highest logits (``k <= 0``: off).
4. top-p: softmax over the survivors, sort descending, keep the shortest prefix whose probability
   sum reaches p (and at least ``min_keep`` tokens; ``p >= 1``: off).
5. min-p: keep tokens with ``logit >= max_logit + log(min_p)``, i.e. ``p >= min_p * p_max``
   (at least ``min_keep``; ``min_p <= 0``: off).
6. temperature: ``logit /= temperature``. ``temperature <= 0`` is greedy: the highest logit after
   steps 1-2 (the first one on ties); steps 3-5 never remove the maximum, so they do not matter.
7. draw: softmax and one uniform draw from the request's own ``numpy.random.Generator`` (seeded by
   ``seed``; same seed + same settings + same logits → same tokens).

Note that, as in llama.cpp, top-p and min-p see the distribution *before* temperature.
Logprobs (``logprobs=True``) are the log-softmax of the raw model logits, before bias, penalties,
truncation and temperature: the model's own distribution, as the OpenAI API and llama-server
(``post_sampling_probs=false``) report it, with the ``top_logprobs`` most likely alternatives.

A device backend need not send a whole row of logits to the host for this: `TopLogits` is a row's best
`TOP_LOGITS` raw logits with their ids and the row's log-sum-exp (`Model.forward(..., top=k)`). `sample` takes
one in place of a row and draws from those alone when no other token could be a candidate: where every other
token's logit after steps 1-2 is at most the k-th best raw one (no positive bias, no penalty that raises, on a
token outside them) and top-k keeps only tokens above it (greedy: the best is above it). The candidates, their
order and the draw are then those of the whole row; otherwise (top-k off, a bias that could lift an outside
token, NaN) it fetches the row (`TopLogits.full`).

`StopMatcher` finds stop strings in streamed text, also across token boundaries; `StopChecker`
combines it with end-of-generation tokens and ``max_tokens`` into a finish reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

_ADAPTIVE_MIN = 1024  # top-p on more candidates than this first tries the best _ADAPTIVE_K only
_ADAPTIVE_K = 256
TOP_LOGITS = 128  # the best logits of a row a device backend sends for sampling (top-k 40 + a 64-token window)


def _field_error(name: str, why: str, value: object) -> ValueError:
    return ValueError(f"SamplingParams.{name} {why}, got {value!r}")


def _number(name: str, value: object, lo: float | None = None, hi: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _field_error(name, "must be a finite number", value)
    if lo is not None and value < lo:
        raise _field_error(name, f"must be >= {lo}", value)
    if hi is not None and value > hi:
        raise _field_error(name, f"must be <= {hi}", value)
    return float(value)


def _integer(name: str, value: object, lo: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise _field_error(name, "must be an integer", value)
    if lo is not None and value < lo:
        raise _field_error(name, f"must be >= {lo}", value)
    return int(value)


def _token_id(name: str, value: object) -> int:
    try:
        tok = int(value) if isinstance(value, str) else value
    except ValueError:
        raise _field_error(name, "keys must be token ids", value) from None
    return _integer(name, tok, 0)


@dataclass(frozen=True)
class SamplingParams:
    """One request's sampling and stopping settings. Defaults are llama.cpp's (common.h)."""

    temperature: float = 0.8
    top_k: int = 40
    top_p: float = 0.95
    min_p: float = 0.05
    min_keep: int = 0
    repeat_penalty: float = 1.0
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    penalty_last_n: int = 64
    logit_bias: Mapping[int, float] | tuple[tuple[int, float], ...] = ()
    seed: int | None = None
    max_tokens: int | None = None
    stop: str | Sequence[str] = ()
    stop_token_ids: Sequence[int] = ()
    ignore_eos: bool = False
    logprobs: bool = False
    top_logprobs: int = 0

    def __post_init__(self) -> None:
        _number("temperature", self.temperature, 0.0)
        _integer("top_k", self.top_k)
        _number("top_p", self.top_p, 0.0, 1.0)
        _number("min_p", self.min_p, 0.0, 1.0)
        _integer("min_keep", self.min_keep, 0)
        _number("repeat_penalty", self.repeat_penalty)
        if self.repeat_penalty <= 0:
            raise _field_error("repeat_penalty", "must be > 0 (1.0 disables it)", self.repeat_penalty)
        _number("presence_penalty", self.presence_penalty)
        _number("frequency_penalty", self.frequency_penalty)
        _integer("penalty_last_n", self.penalty_last_n, -1)
        if self.seed is not None:
            _integer("seed", self.seed, 0)
        if self.max_tokens is not None:
            _integer("max_tokens", self.max_tokens, 1)
        _integer("top_logprobs", self.top_logprobs, 0)
        if not isinstance(self.ignore_eos, bool) or not isinstance(self.logprobs, bool):
            raise ValueError("SamplingParams.ignore_eos and .logprobs must be booleans")
        object.__setattr__(self, "logit_bias", self._norm_bias(self.logit_bias))
        object.__setattr__(self, "stop", self._norm_stop(self.stop))
        ids = tuple(_integer("stop_token_ids", t, 0) for t in self.stop_token_ids)
        object.__setattr__(self, "stop_token_ids", ids)

    @staticmethod
    def _norm_bias(bias: object) -> tuple[tuple[int, float], ...]:
        items = bias.items() if isinstance(bias, Mapping) else bias
        out: dict[int, float] = {}
        try:
            pairs = list(items)  # type: ignore[arg-type]
        except TypeError:
            raise _field_error("logit_bias", "must map token ids to numbers", bias) from None
        for pair in pairs:
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise _field_error("logit_bias", "must map token ids to numbers", bias)
            tok, b = _token_id("logit_bias", pair[0]), pair[1]
            if isinstance(b, bool) or not isinstance(b, (int, float)) or math.isnan(b) or b == math.inf:
                raise _field_error("logit_bias", f"value for token {tok} must be a number or -inf", b)
            out[tok] = float(b)
        return tuple(sorted(out.items()))

    @staticmethod
    def _norm_stop(stop: object) -> tuple[str, ...]:
        items = (stop,) if isinstance(stop, str) else stop
        if not isinstance(items, Iterable):
            raise _field_error("stop", "must be a string or a list of strings", stop)
        out = tuple(items)
        for s in out:
            if not isinstance(s, str) or not s:
                raise _field_error("stop", "entries must be non-empty strings", s)
        return out

    @classmethod
    def greedy(cls, **kw: object) -> "SamplingParams":
        """Deterministic argmax decoding (temperature 0), other settings as given."""
        return cls(temperature=0.0, **kw)  # type: ignore[arg-type]

    @property
    def is_greedy(self) -> bool:
        return self.temperature <= 0.0

    @property
    def has_penalties(self) -> bool:
        """Whether the repetition / frequency / presence penalties change any logit (a window and a penalty)."""
        return self.penalty_last_n != 0 and (self.repeat_penalty != 1.0 or self.frequency_penalty != 0.0
                                             or self.presence_penalty != 0.0)

    @property
    def is_plain_greedy(self) -> bool:
        """Greedy on the raw logits: no bias, no penalties, no logprobs (what a device-side argmax loop gives)."""
        return self.is_greedy and not self.logit_bias and not self.logprobs and not self.has_penalties


@dataclass(frozen=True)
class TokenLogprob:
    """The chosen token's log-probability under the raw model distribution, and the top alternatives."""

    token: int
    logprob: float
    top: tuple[tuple[int, float], ...] = field(default=())  # (token, logprob), most likely first


@dataclass(frozen=True)
class TopLogits:
    """One row of logits as a backend sends it for sampling (see the module docstring): its best raw logits
    (`vals`, descending) and their token ids, the log-sum-exp of the whole row, the vocabulary size, and `full()`,
    which fetches the whole row (only until the model's next step)."""

    ids: np.ndarray  # (k,) int64
    vals: np.ndarray  # (k,) float64, descending
    lse: float
    n_vocab: int
    full: Callable[[], np.ndarray]


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Numerically stable log-softmax in float64 (``-inf`` entries stay ``-inf``)."""
    x = np.asarray(logits, dtype=np.float64)
    m = np.max(x)
    return x - (m + np.log(np.sum(np.exp(x - m))))


def apply_penalties(logits: np.ndarray, history: Sequence[int], params: SamplingParams) -> None:
    """llama.cpp's repetition / frequency / presence penalties, in place, over the last tokens."""
    seen = _penalty_window(history, params, logits.shape[0])
    if seen is not None:
        toks, counts = seen
        logits[toks] = _penalized(logits[toks], counts, params)


def _penalty_window(history: Sequence[int], params: SamplingParams,
                    n_vocab: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The distinct tokens of the penalty window (the last `penalty_last_n` of history) and how often each
    occurs there; None where the penalties change nothing."""
    n = params.penalty_last_n
    if len(history) == 0 or not params.has_penalties:
        return None
    window = np.asarray(history if n < 0 else history[-n:], dtype=np.int64)
    if window.size and (window.min() < 0 or window.max() >= n_vocab):
        raise ValueError(f"history holds a token id outside [0, {n_vocab})")
    return np.unique(window, return_counts=True)


def _penalized(vals: np.ndarray, counts: np.ndarray, params: SamplingParams) -> np.ndarray:
    """Logits `vals` of tokens seen `counts` times in the window, penalised."""
    vals = np.where(vals <= 0, vals * params.repeat_penalty, vals / params.repeat_penalty)
    return vals - (counts * params.frequency_penalty + params.presence_penalty)


def _softmax(vals: np.ndarray) -> np.ndarray:
    e = np.exp(vals - vals.max())
    return e / e.sum()


def _best(vals: np.ndarray, k: int) -> np.ndarray:
    """The places of the k best of vals (tokens in ascending id order), best first; equal values by place (the
    lower id first, at the k-th too: a device sampler's order, `kernels/sample.py`)."""
    kth = np.partition(vals, vals.size - k)[vals.size - k]
    above = np.nonzero(vals > kth)[0]
    keep = np.concatenate([above, np.nonzero(vals == kth)[0][: k - above.size]])
    return keep[np.lexsort((keep, -vals[keep]))]


def _top_p(ids: np.ndarray, vals: np.ndarray, p: float, min_keep: int) -> tuple[np.ndarray, np.ndarray]:
    """Keep the most likely tokens whose probabilities sum to at least p; result sorted descending."""
    m = vals.max()
    log_z = m + math.log(float(np.sum(np.exp(vals - m))))
    need = max(min_keep, 1)
    if ids.size > _ADAPTIVE_MIN:  # the nucleus is usually small: try the best _ADAPTIVE_K first
        part = _best(vals, _ADAPTIVE_K)
        cum = np.cumsum(np.exp(vals[part] - log_z))
        hit = np.nonzero((cum >= p) & (np.arange(1, cum.size + 1) >= need))[0]
        if hit.size:
            keep = part[: hit[0] + 1]
            return ids[keep], vals[keep]
    order = np.argsort(-vals, kind="stable")
    cum = np.cumsum(np.exp(vals[order] - log_z))
    hit = np.nonzero((cum >= p) & (np.arange(1, cum.size + 1) >= need))[0]
    last = hit[0] + 1 if hit.size else order.size
    keep = order[:last]
    return ids[keep], vals[keep]


def _min_p(ids: np.ndarray, vals: np.ndarray, p: float, min_keep: int) -> tuple[np.ndarray, np.ndarray]:
    """Keep tokens whose probability is at least p times the best one's (at least min_keep)."""
    floor = vals.max() + math.log(p)
    mask = vals >= floor
    if int(mask.sum()) >= max(min_keep, 1):
        return ids[mask], vals[mask]
    order = np.argsort(-vals, kind="stable")[: max(min_keep, 1)]
    return ids[order], vals[order]


class Sampler:
    """Picks tokens for one request. Holds the request's random generator; not thread-safe."""

    def __init__(self, params: SamplingParams, n_vocab: int) -> None:
        if n_vocab <= 0:
            raise ValueError(f"n_vocab must be positive, got {n_vocab}")
        for tok, _ in params.logit_bias:  # type: ignore[misc]
            if tok >= n_vocab:
                raise _field_error("logit_bias", f"has token id {tok} outside the vocabulary (n_vocab {n_vocab})", tok)
        self.params = params
        self.n_vocab = n_vocab
        self.rng = np.random.default_rng(params.seed)
        bias = params.logit_bias  # type: ignore[assignment]
        self._bias_ids = np.array([t for t, _ in bias], dtype=np.int64)
        self._bias_vals = np.array([b for _, b in bias], dtype=np.float64)

    def transform(self, logits: np.ndarray, history: Sequence[int] = ()) -> np.ndarray:
        """Steps 1-2 of the chain: a float64 copy of the logits with bias and penalties applied."""
        x = np.array(logits, dtype=np.float64).reshape(-1)
        if x.shape[0] != self.n_vocab:
            raise ValueError(f"logits have {x.shape[0]} entries, the vocabulary has {self.n_vocab}")
        if not x.max() < np.inf:  # (one pass: NaN makes the max NaN)
            raise ValueError("logits contain NaN or +inf")
        if self._bias_ids.size:
            x[self._bias_ids] += self._bias_vals
        apply_penalties(x, history, self.params)
        return x

    def candidates(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Steps 3-6: the surviving token ids and their (temperature-scaled) logits."""
        ids = np.nonzero(x > -np.inf)[0]
        if ids.size == 0:
            raise ValueError("every token has logit -inf after logit bias: nothing can be sampled")
        return self._candidates(ids, x[ids])

    def _candidates(self, ids: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Steps 3-6 on the finite logits `vals` of tokens `ids` (ascending)."""
        p = self.params
        if 0 < p.top_k < ids.size:
            keep = _best(vals, p.top_k)
            ids, vals = ids[keep], vals[keep]
        if p.top_p < 1.0:
            ids, vals = _top_p(ids, vals, p.top_p, p.min_keep)
        if p.min_p > 0.0:
            ids, vals = _min_p(ids, vals, p.min_p, p.min_keep)
        return ids, vals / p.temperature

    def probabilities(self, logits: np.ndarray, history: Sequence[int] = ()) -> np.ndarray:
        """The full distribution (n_vocab,) that `sample` draws from; one-hot when greedy."""
        x = self.transform(logits, history)
        out = np.zeros(self.n_vocab)
        if self.params.is_greedy:
            out[int(np.argmax(x))] = 1.0
            return out
        ids, vals = self.candidates(x)
        out[ids] = _softmax(vals)
        return out

    def sample(self, logits: "np.ndarray | TopLogits",
               history: Sequence[int] = ()) -> tuple[int, TokenLogprob | None]:
        """The next token given this step's logits (n_vocab,) or their `TopLogits` and the sequence so far
        (prompt and generated tokens, for the penalties); with ``logprobs`` also its `TokenLogprob`."""
        if isinstance(logits, TopLogits):
            token = self._sample_top(logits, history)
            if token is not None:
                return token, (self.logprob(logits, token) if self.params.logprobs else None)
            logits = logits.full()
        x = self.transform(logits, history)
        if self.params.is_greedy:
            token = int(np.argmax(x))
        else:
            token = self._draw(*self.candidates(x))
        return token, (self.logprob(logits, token) if self.params.logprobs else None)

    def device_row(self, top: int = TOP_LOGITS) -> tuple[float, int, int | float, float, int] | None:
        """This request's settings as a device sampler takes them (temperature, top_k, top_p, min_p, need =
        max(min_keep, 1); temperature 0: greedy; top_k 0: a draw from the whole row), where its draw is `sample`'s:
        no logit bias, no penalty, no logprobs, and either top-k on (1..top: the row's best `top` keys hold every
        candidate) or off with top-p off and min-p keeping no token by force (the whole row in id order: an OpenAI
        client's default); else None (the host samples)."""
        p = self.params
        if p.logit_bias or p.logprobs or p.has_penalties:
            return None
        if p.is_greedy:
            return (0.0, 1, 1.0, 0.0, 1)
        need = max(p.min_keep, 1)
        if 0 < p.top_k <= min(top, self.n_vocab):
            return (p.temperature, p.top_k, p.top_p, p.min_p, need)
        if (p.top_k <= 0 or p.top_k >= self.n_vocab) and p.top_p >= 1.0 and (p.min_p <= 0.0 or need == 1):
            return (p.temperature, 0, 1.0, p.min_p, 1)
        return None

    def draw_ahead(self, n: int) -> np.ndarray:
        """The uniform draws of the next n sampled tokens, as `sample` would make them (none for greedy: zeros);
        `drew(m)` then keeps the first m of them drawn and puts the rest back."""
        self._ahead = self.rng.bit_generator.state
        return np.zeros(n) if self.params.is_greedy else self.rng.random(n)

    def drew(self, m: int) -> None:
        """Of the last `draw_ahead`, only the first m were used: the generator continues after them."""
        if not self.params.is_greedy:
            self.rng.bit_generator.state = self._ahead
            self.rng.random(m)

    def _draw(self, ids: np.ndarray, vals: np.ndarray) -> int:
        probs = _softmax(vals)
        u = self.rng.random()
        idx = int(np.searchsorted(np.cumsum(probs), u * probs.sum(), side="left"))
        return int(ids[min(idx, ids.size - 1)])

    def _sample_top(self, top: TopLogits, history: Sequence[int]) -> int | None:
        """`sample`'s token from the best logits alone; None where a token outside them could be a candidate."""
        if top.n_vocab != self.n_vocab:
            raise ValueError(f"logits have {top.n_vocab} entries, the vocabulary has {self.n_vocab}")
        x = np.array(top.vals, dtype=np.float64)
        if not x.size or not x[0] < np.inf or not math.isfinite(top.lse):  # (NaN, +inf: the row's check raises)
            return None
        outside = top.ids.size < self.n_vocab
        bound = x[-1] if outside else -np.inf  # no other token's raw logit is above it
        where = {int(t): i for i, t in enumerate(top.ids)}
        for tok, b in zip(self._bias_ids.tolist(), self._bias_vals.tolist()):
            i = where.get(tok)
            if i is not None:
                x[i] += b
            elif b > 0 and outside:
                return None
        p = self.params
        seen = _penalty_window(history, p, self.n_vocab)
        if seen is not None:
            toks, counts = seen
            rows = np.array([where.get(int(t), -1) for t in toks], dtype=np.int64)
            raises = p.repeat_penalty < 1.0 or p.frequency_penalty < 0.0 or p.presence_penalty < 0.0
            if raises and outside and (rows < 0).any():
                return None
            rows, counts = rows[rows >= 0], counts[rows >= 0]
            x[rows] = _penalized(x[rows], counts, p)
        if p.is_greedy:
            best = x.max()
            return int(top.ids[x == best].min()) if best > bound else None  # (ties: the lowest id, as argmax)
        live = x > -np.inf
        if not live.any():
            return None  # (the row's path raises its error)
        ids, vals = top.ids[live], x[live]
        order = np.argsort(ids, kind="stable")  # the row's order: ascending ids
        ids, vals = ids[order], vals[order]
        # with tokens outside: top-k must cut (as it would on the row) to tokens all above them
        if outside and not (0 < p.top_k < ids.size and np.count_nonzero(vals > bound) >= p.top_k):
            return None
        return self._draw(*self._candidates(ids, vals))

    def logprob(self, logits: "np.ndarray | TopLogits", token: int) -> TokenLogprob:
        """`token`'s log-probability under the raw logits, with the `top_logprobs` best alternatives."""
        if isinstance(logits, TopLogits):
            hit = np.nonzero(logits.ids == token)[0]
            n = min(self.params.top_logprobs, self.n_vocab)
            if hit.size and n <= logits.ids.size:
                top = tuple((int(t), float(v - logits.lse)) for t, v in zip(logits.ids[:n], logits.vals[:n]))
                return TokenLogprob(token=int(token), logprob=float(logits.vals[hit[0]] - logits.lse), top=top)
            logits = logits.full()
        lp = log_softmax(np.asarray(logits).reshape(-1))
        n = min(self.params.top_logprobs, lp.size)
        top: tuple[tuple[int, float], ...] = ()
        if n > 0:
            best = np.argpartition(-lp, n - 1)[:n]
            best = best[np.argsort(-lp[best], kind="stable")]
            top = tuple((int(t), float(lp[t])) for t in best)
        return TokenLogprob(token=int(token), logprob=float(lp[token]), top=top)


class StopMatcher:
    """Finds stop strings in streamed text, also when one spans several tokens.

    ``push(text)`` returns ``(safe_text, stopped)``: the text that can be shown now. Text that could
    still be the start of a stop string is held back and released as soon as it cannot; when a stop
    string appears, everything before it is returned, the stop string itself never is, and
    ``stopped`` is True (later pushes return nothing). ``flush()`` releases held text at the end.
    """

    def __init__(self, stop: Iterable[str]) -> None:
        self.stop = tuple(s for s in stop if s)
        self._held = ""
        self.stopped = False
        self.matched: str | None = None

    def push(self, text: str) -> tuple[str, bool]:
        if self.stopped:
            return "", True
        buf = self._held + text
        if not self.stop:
            self._held = ""
            return buf, False
        hits = [(buf.find(s), i) for i, s in enumerate(self.stop)]
        hits = [(pos, i) for pos, i in hits if pos >= 0]
        if hits:
            pos, i = min(hits)
            self.stopped, self.matched, self._held = True, self.stop[i], ""
            return buf[:pos], True
        keep = self._partial_suffix(buf)
        self._held = buf[len(buf) - keep:] if keep else ""
        return buf[: len(buf) - keep], False

    def _partial_suffix(self, buf: str) -> int:
        """Length of the longest suffix of buf that is a proper prefix of some stop string."""
        best = 0
        for s in self.stop:
            for k in range(min(len(s) - 1, len(buf)), best, -1):
                if buf.endswith(s[:k]):
                    best = k
                    break
        return best

    def flush(self) -> str:
        out, self._held = ("" if self.stopped else self._held), ""
        return out

    @property
    def held(self) -> str:
        return self._held


class StopChecker:
    """Decides when a request is done: end-of-generation tokens, stop strings, ``max_tokens``.

    ``step(token, text)`` takes each sampled token and its decoded text piece and returns
    ``(text_to_emit, finish_reason)`` with finish_reason None, ``"stop"`` or ``"length"``.
    The text of an end-of-generation token is not emitted.
    """

    def __init__(self, params: SamplingParams, eog_ids: Iterable[int] = ()) -> None:
        self.params = params
        self.eog = set() if params.ignore_eos else {int(t) for t in eog_ids}
        self.eog.update(params.stop_token_ids)  # type: ignore[arg-type]
        self.matcher = StopMatcher(params.stop)  # type: ignore[arg-type]
        self.n_generated = 0
        self.finish_reason: str | None = None

    def step(self, token: int, text: str) -> tuple[str, str | None]:
        if self.finish_reason is not None:
            return "", self.finish_reason
        self.n_generated += 1
        if int(token) in self.eog:
            self.finish_reason = "stop"
            return self.matcher.flush(), "stop"
        out, hit = self.matcher.push(text)
        if hit:
            self.finish_reason = "stop"
            return out, "stop"
        if self.params.max_tokens is not None and self.n_generated >= self.params.max_tokens:
            self.finish_reason = "length"
            return out + self.matcher.flush(), "length"
        return out, None

    def finish(self, reason: str = "length") -> str:
        """End the request from outside (context full, cancelled): the held-back text to emit."""
        if self.finish_reason is None:
            self.finish_reason = reason
        return self.matcher.flush()
