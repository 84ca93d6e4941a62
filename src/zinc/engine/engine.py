"""The generation engine: many requests share one model, advanced step by step.

    engine = Engine(model, max_running=4)          # model: a zinc.api.Model (or anything alike)
    h = engine.submit(prompt_ids, SamplingParams(temperature=0, max_tokens=32))
    for chunk in h.text_chunks(): ...              # or: r = h.result(); r.text, r.usage, r.stats
    h.cancel()                                     # from any thread; the request's cache is freed

`submit` is thread-safe and returns a `RequestHandle` at once. A request waits in the scheduler's
queue until one of `max_running` slots is free; it then gets its own cache, big enough for its
prompt plus `max_tokens` (at most the engine's `n_ctx`): a finished request's cache when one is big
enough (so a GPU backend replays the step graphs it captured on it instead of capturing new ones each
request), else a new one (`model.new_cache`, sized up to a power of two from 256 cells, at most
`n_ctx`; the spare caches are dropped first). Memory for caches is bounded by `max_running` caches;
past that many spares the least recently finished is dropped.

Prompt caching (``submit(..., cache_prompt=True)``, the default): of the spare caches, the request
takes the one that holds the longest prefix of its prompt, cut back to it, and computes only the rest
(a chat's next turn: only the new messages); `Usage.cached_tokens` counts what it kept. The prompt's
last token is always computed (its logits give the first new token). Attention caches keep any
prefix; sliding-window rings only while they still hold the window before the cut; recurrent state
(Gated DeltaNet) only when everything it saw is a prefix of the prompt. The kept entries were computed
in other chunks (or one token at a time), so logits can differ from a fresh computation in the last
bits (on the GPU, by the decode kernels' rounding); ``cache_prompt=False`` computes the whole prompt.
A spare smaller than the request needs is not used (caches grow by doubling: a chat that outgrows its
cache computes its prompt afresh once a doubling).

Each `step()` runs one `StepPlan` of the scheduler: prompt chunks (at most `n_ubatch` tokens, each its own
forward) and one decode token per generating request. Two or more generating requests decode together in
one forward (`Model.forward_seqs`: every weight read once for all of them; with `batch_decode=False` each
its own); when all of them decode greedily on the raw logits only their argmax ids come back. Sampling takes
each row's best `TOP_LOGITS` logits (`Model.forward(..., top=k)`, `sampler.TopLogits`; `top_logits=0`: whole
rows) where the model offers them: the whole row leaves the device only when the request's settings need it
(see `engine.sampler`).

Device loops: on a backend with a device-side greedy loop (`Model.greedy_on_device`) requests decoding greedily
on the raw logits (`SamplingParams.is_plain_greedy`), alone or together, take up to `greedy_chunk` tokens a
step there (`Model.start_seqs`: no logits to the host between them). Where the loop runs without waiting
(`Model.loops_on_device`: CUDA), sampled requests whose settings the device sampler takes
(`Sampler.device_row`: no bias, penalties or logprobs, top-k within the best logits) draw theirs there too
(the draws made ahead from each request's generator, so a seed makes the same draws either way;
`device_sampling=False`: the host samples), and each chunk's successor is launched before the chunk's tokens
are read (`DeviceChunk.follow`; `chunks_ahead=False`: not): the GPU runs the next chunk while the host streams
this one's text, with no wait between them. A chunk launched ahead for a set of requests that changes (one
finished, one joined) is read at the next step, its tokens emitted for those still generating. A device loop
that fails fails its requests (their caches may hold its steps). Tokens past a stop are dropped, and
their entries in the cache are never reused. Sampling (`Sampler`), stop conditions (`StopChecker`)
and the text (the tokenizer's streaming decoder: never a broken UTF-8 character) are per request.

Two ways to drive it: `start()` runs the loop in a background thread (what a server wants;
`shutdown()` stops it cleanly and cancels what is left; `submit(..., on_event=cb)` also pushes each
event to a callback), or, without a thread, whoever waits on a handle (iterating it, `result()`)
runs steps itself under a lock; every waiting thread then makes every request progress. Finish reasons: ``stop`` (end-of-generation token or stop string),
``length`` (``max_tokens`` or the context is full), ``cancelled``, ``error`` (`result()` raises).
"""

from __future__ import annotations

import inspect
import itertools
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from zinc.engine.sampler import TOP_LOGITS, Sampler, SamplingParams, StopChecker, TokenLogprob
from zinc.engine.scheduler import Scheduler, StepPlan, WorkItem

FINISH_REASONS = ("stop", "length", "cancelled", "error")
GREEDY_CHUNK = 8  # greedy tokens a step on a device-side loop (one host round trip each)


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int = 0  # prompt tokens whose cache entries a finished request left (not computed again)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, int]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "total_tokens": self.total_tokens, "prompt_tokens_details": {"cached_tokens": self.cached_tokens}}


@dataclass(frozen=True)
class RequestStats:
    """Timings of one request (seconds; wall clock, so time shared with other requests counts)."""

    prompt_tokens: int
    generated_tokens: int
    queue_s: float  # submitted → admitted (cache allocated)
    ttft_s: float | None  # submitted → first token sampled
    prefill_s: float  # first prompt chunk started → first token sampled
    decode_s: float  # first token → last token
    total_s: float  # submitted → finished
    cached_tokens: int = 0  # prompt tokens taken from a finished request's cache (not computed)

    @property
    def prefill_tok_s(self) -> float | None:
        """Prompt tokens computed a second (cached ones not counted)."""
        n = self.prompt_tokens - self.cached_tokens
        return n / self.prefill_s if self.prefill_s > 0 and self.generated_tokens else None

    @property
    def decode_tok_s(self) -> float | None:
        n = self.generated_tokens - 1
        return n / self.decode_s if n > 0 and self.decode_s > 0 else None

    def to_dict(self) -> dict[str, Any]:
        return {"prompt_tokens": self.prompt_tokens, "generated_tokens": self.generated_tokens,
                "queue_s": self.queue_s, "ttft_s": self.ttft_s, "prefill_s": self.prefill_s,
                "decode_s": self.decode_s, "total_s": self.total_s, "cached_tokens": self.cached_tokens,
                "prefill_tok_s": self.prefill_tok_s, "decode_tok_s": self.decode_tok_s}

    def summary(self) -> str:
        """One line: prompt and generation speed, time to first token."""
        pp, tg = self.prefill_tok_s, self.decode_tok_s
        cached = f" ({self.cached_tokens} cached)" if self.cached_tokens else ""
        parts = [f"prompt {self.prompt_tokens} tok{cached} in {self.prefill_s:.2f} s"
                 + (f" ({pp:.1f} tok/s)" if pp else ""),
                 f"generated {self.generated_tokens} tok in {self.decode_s:.2f} s"
                 + (f" ({tg:.1f} tok/s)" if tg else "")]
        if self.ttft_s is not None:
            parts.append(f"first token after {self.ttft_s:.2f} s")
        return ", ".join(parts)


@dataclass
class GenerationResult:
    """What a finished request produced. `text` is exactly the concatenation of its streamed text."""

    text: str
    token_ids: list[int]
    finish_reason: str
    usage: Usage
    stats: RequestStats
    logprobs: list[TokenLogprob] | None = None
    stop: str | None = None  # the stop string that ended it, if any
    error: BaseException | None = None

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Event:
    """One thing that happened to a request: a sampled token (``kind="token"``, with the text it
    released, possibly empty) or the end (``kind="done"``, with the finish reason and the result)."""

    kind: str
    text: str = ""
    token: int | None = None
    logprob: TokenLogprob | None = None
    finish_reason: str | None = None
    result: GenerationResult | None = None


class RequestHandle:
    """The caller's side of one request: its events, its text, `cancel()` and `result()`."""

    def __init__(self, engine: "Engine", request: "_Request",
                 on_event: Callable[[Event], None] | None = None) -> None:
        self._engine, self._req, self._on_event = engine, request, on_event
        self._cv = threading.Condition()
        self._events: deque[Event] = deque()
        self._result: GenerationResult | None = None

    @property
    def id(self) -> int:
        return self._req.request_id

    @property
    def prompt_tokens(self) -> int:
        return self._req.n_prompt

    @property
    def done(self) -> bool:
        return self._result is not None

    @property
    def finish_reason(self) -> str | None:
        return self._result.finish_reason if self._result else None

    def _push(self, ev: Event) -> None:
        with self._cv:
            self._events.append(ev)
            if ev.kind == "done":
                self._result = ev.result
            self._cv.notify_all()
        if self._on_event is not None:
            try:
                self._on_event(ev)
            except Exception as e:  # noqa: BLE001 - a caller's callback must not break the engine
                self._engine._log(f"request {self.id}: on_event callback failed: {e!r}")

    def _next(self, timeout: float | None) -> Event | None:
        """The next event; None when the request is over and every event was taken."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._cv:
                if self._events:
                    return self._events.popleft()
                if self._result is not None:
                    return None
                if self._engine.threaded:
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        raise TimeoutError(f"request {self.id} produced nothing within {timeout} s")
                    self._cv.wait(left)
                    continue
            self._engine.pump()

    def __iter__(self) -> Iterator[Event]:
        while (ev := self._next(None)) is not None:
            yield ev

    def text_chunks(self) -> Iterator[str]:
        """The generated text as it becomes final (no empty chunks, never half a character)."""
        for ev in self:
            if ev.text:
                yield ev.text

    def result(self, timeout: float | None = None) -> GenerationResult:
        """Wait for the end (driving the engine when it has no thread); raises the request's error."""
        while self._result is None:
            if self._next(timeout) is None:
                break
        with self._cv:
            self._events.clear()
        assert self._result is not None
        if self._result.error is not None:
            raise self._result.error
        return self._result

    def cancel(self) -> None:
        """Stop the request; its cache is freed at once (or after the forward running right now)."""
        self._engine.cancel(self)

    def __repr__(self) -> str:
        return f"RequestHandle(id={self.id}, finish_reason={self.finish_reason!r})"


class _Spare:
    """A finished request's cache and the tokens whose entries it holds (positions 0, 1, ...)."""

    def __init__(self, cache: Any, tokens: list[int]) -> None:
        self.cache, self.tokens = cache, tokens

    def reusable(self, prompt: list[int]) -> int:
        """How many of `prompt`'s first tokens this cache can keep (`KVCache.truncate`): their common prefix,
        all but the prompt's last token (computed again for the logits of the first new token); recurrent
        state only as a whole (every token it saw is a prefix of the prompt); ring layers only while they
        still hold the window."""
        n = 0
        for a, b in zip(self.tokens, prompt[:-1]):
            if a != b:
                break
            n += 1
        return n if n and self.cache.truncate_problem(n) is None else 0


class _Request:
    """Engine-side state of one request. Only the engine thread (or the pumping one) touches it."""

    def __init__(self, rid: int, prompt: list[int], params: SamplingParams, sampler: Sampler,
                 checker: StopChecker, decoder: Any, n_ctx: int, cache_prompt: bool = True) -> None:
        self.request_id, self.params, self.sampler, self.checker = rid, params, sampler, checker
        self.decoder, self.n_ctx = decoder, n_ctx
        self.tokens = list(prompt)  # prompt + generated: the penalties' history
        self.n_prompt = len(prompt)
        self.n_prefilled = 0
        self.n_cached = 0  # prompt tokens found in a spare cache (`Engine._cache_for`)
        self.cache_prompt = bool(cache_prompt)
        self.cache: Any = None
        self.handle: RequestHandle | None = None
        self.text: list[str] = []
        self.logprobs: list[TokenLogprob] | None = [] if params.logprobs else None
        self.finished = False
        self.t_submit = time.perf_counter()
        self.t_admit = self.t_prefill = self.t_first = self.t_end = 0.0

    @property
    def prefill_remaining(self) -> int:
        return self.n_prompt - self.n_prefilled

    @property
    def generated(self) -> list[int]:
        return self.tokens[self.n_prompt:]

    @property
    def tokens_left(self) -> int:
        """Tokens it may still generate (max_tokens; else the context bounds it)."""
        m = self.params.max_tokens
        return self.n_ctx if m is None else m - (len(self.tokens) - self.n_prompt)

    def stats(self) -> RequestStats:
        end = self.t_end or time.perf_counter()
        first = self.t_first or end
        return RequestStats(
            prompt_tokens=self.n_prompt, generated_tokens=len(self.tokens) - self.n_prompt,
            queue_s=(self.t_admit or end) - self.t_submit,
            ttft_s=(self.t_first - self.t_submit) if self.t_first else None,
            prefill_s=(first - self.t_prefill) if self.t_prefill else 0.0,
            decode_s=(end - self.t_first) if self.t_first else 0.0, total_s=end - self.t_submit,
            cached_tokens=self.n_cached)


class Engine:
    """Schedules requests over one model. See the module docstring."""

    def __init__(self, model: Any, *, max_running: int = 4, n_ctx: int | None = None,
                 step_tokens: int | None = None, log: Callable[[str], None] | None = None,
                 greedy_chunk: int | None = None, batch_decode: bool = True, top_logits: int = TOP_LOGITS,
                 device_sampling: bool = True, chunks_ahead: bool = True) -> None:
        self.model = model
        self.batch_decode = bool(batch_decode) and hasattr(model, "forward_seqs")
        # sampling from each row's best logits (0: whole rows), where the model offers them (a proxy may not)
        self._top = {"top": top_logits} if top_logits > 0 and _takes(model.forward, "top") else {}
        self._seqs_top = {"top": top_logits} if self._top and self.batch_decode and _takes(model.forward_seqs,
                                                                                              "top") else {}
        # sampled requests whose settings a device sampler takes draw their tokens there in greedy_chunk steps
        self._loops = hasattr(model, "start_seqs")
        self._device_sampling = device_sampling and bool(getattr(model, "loops_on_device", False)) and top_logits > 0
        self._top_k = top_logits
        self._ahead: dict[tuple[int, ...], tuple[list[_Request], Any]] = {}  # device loops launched ahead
        self._chunks_ahead = chunks_ahead  # (False: each chunk read before the next is launched)
        if greedy_chunk is None:
            greedy_chunk = GREEDY_CHUNK if getattr(model, "greedy_on_device", False) else 1
        self.greedy_chunk = max(1, int(greedy_chunk))
        self.n_ctx = int(n_ctx or model.n_ctx)
        self.n_ubatch = int(getattr(model, "n_ubatch", 512))
        self.scheduler = Scheduler(max_running, self.n_ubatch, step_tokens)
        self._log = log or (lambda msg: print(f"zinc.engine: {msg}", file=sys.stderr))
        self._ids = itertools.count(1)
        self._cv = threading.Condition()  # guards the inbox, the cancel list and the stop flag
        self._inbox: list[_Request] = []
        self._cancels: list[_Request] = []
        self._stopping = False
        self._closed = False
        self._step_lock = threading.Lock()  # one step at a time (not re-entrant: see cancel)
        self._thread: threading.Thread | None = None
        self._spare: list[_Spare] = []  # finished requests' caches, reused by the next ones (at most max_running)
        self.n_steps = 0

    # -- submitting -------------------------------------------------------------------------------
    def submit(self, prompt_ids: Sequence[int], params: SamplingParams | None = None, *,
               decode_special: bool = False, eog_ids: Iterable[int] | None = None,
               on_event: Callable[[Event], None] | None = None, cache_prompt: bool = True) -> RequestHandle:
        """Queue a request (thread-safe). ValueError for an empty or too long prompt, bad ids or
        params; RuntimeError after `shutdown()`. ``decode_special``: render control tokens (chat
        markers) as text; ``eog_ids``: end-of-generation tokens (default: the tokenizer's);
        ``on_event(event)``: also called with every event, from the thread that runs the step (an
        asyncio server hands them to its loop with ``call_soon_threadsafe``); ``cache_prompt``: start
        from the longest prefix of the prompt that a finished request's cache holds (see the module
        docstring); False computes the whole prompt (what a fresh engine gives, bit for bit)."""
        params = params if params is not None else SamplingParams()
        if not isinstance(params, SamplingParams):
            raise TypeError(f"params must be a SamplingParams, got {type(params).__name__}")
        prompt = self._check_prompt(prompt_ids)
        sampler = Sampler(params, self.model.n_vocab)
        tok = self.model.tokenizer
        checker = StopChecker(params, tok.eog_ids if eog_ids is None else eog_ids)
        want = len(prompt) + (params.max_tokens or self.n_ctx)
        req = _Request(next(self._ids), prompt, params, sampler, checker,
                       tok.stream_decoder(special=decode_special), min(self.n_ctx, want), cache_prompt)
        handle = req.handle = RequestHandle(self, req, on_event)
        with self._cv:
            if self._closed:
                raise RuntimeError("the engine is shut down")
            self._inbox.append(req)
            self._cv.notify_all()
        return handle

    def _check_prompt(self, prompt_ids: Sequence[int]) -> list[int]:
        try:
            prompt = [int(t) for t in prompt_ids]
        except (TypeError, ValueError):
            raise ValueError("prompt_ids must be a sequence of token ids") from None
        if not prompt:
            raise ValueError("the prompt is empty: need at least one token id")
        bad = [t for t in prompt if not 0 <= t < self.model.n_vocab]
        if bad:
            raise ValueError(f"token id {bad[0]} is out of range [0, {self.model.n_vocab})")
        if len(prompt) > self.n_ctx:
            raise ValueError(f"the prompt has {len(prompt)} tokens; the context holds {self.n_ctx}")
        return prompt

    def cancel(self, handle: RequestHandle) -> None:
        """Cancel a request (thread-safe). Done now when no step is running, else right after it
        (also when called from inside a step, e.g. by a finalizer: the step lock is not re-entrant)."""
        with self._cv:
            self._cancels.append(handle._req)
            self._cv.notify_all()
        if self._step_lock.acquire(blocking=False):
            try:
                self._take_inbox()
            finally:
                self._step_lock.release()

    # -- state ------------------------------------------------------------------------------------
    @property
    def threaded(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def n_waiting(self) -> int:
        return len(self.scheduler.waiting) + len(self._inbox)

    @property
    def n_running(self) -> int:
        return len(self.scheduler.running)

    @property
    def n_caches(self) -> int:
        """Caches of running requests right now (with the spare ones, never more than `max_running`)."""
        return sum(1 for r in self.scheduler.running if r.cache is not None)

    @property
    def n_spare(self) -> int:
        """Finished requests' caches kept for the next ones."""
        return len(self._spare)

    @property
    def idle(self) -> bool:
        with self._cv:
            return not (self._inbox or self._cancels or len(self.scheduler))

    # -- stepping ---------------------------------------------------------------------------------
    def step(self) -> bool:
        """Run one step (admit, schedule, forward, sample). True when work is left."""
        with self._step_lock:
            self._take_inbox()
            self.scheduler.admit(self._admit)
            plan = self.scheduler.schedule()
            if plan:
                self._run(plan)
                self.n_steps += 1
            self._take_inbox()  # cancels that came during the step: free their caches now
            return not self.idle

    def pump(self) -> None:
        """One step from a waiting caller (no background thread); a no-op when one runs."""
        if not self.threaded:
            self.step()

    def run_until_idle(self) -> None:
        while self.step():
            pass

    def _take_inbox(self) -> None:
        with self._cv:
            new, self._inbox = self._inbox, []
            cancels, self._cancels = self._cancels, []
        for req in new:
            self.scheduler.add(req)
        for req in cancels:
            if not req.finished:
                self.scheduler.remove(req)
                self._finish(req, "cancelled", req.checker.finish("cancelled"))

    def _cache_for(self, req: _Request) -> Any:
        """A cache for `req`: of the spare caches of at least its `n_ctx` cells, the one holding the longest
        prefix of its prompt (with `cache_prompt`), cut back to it, else the smallest, reset; else a new one
        (spares dropped first). Sets how much of the prompt is already in it (`n_prefilled`, `n_cached`)."""
        fits = [sp for sp in self._spare if sp.cache.n_ctx >= req.n_ctx]
        if not fits:
            self._spare.clear()
            size = 256
            while size < req.n_ctx:
                size *= 2
            return self.model.new_cache(max(req.n_ctx, min(size, self.n_ctx)))
        prompt = req.tokens[:req.n_prompt]
        keep, spare = max(((sp.reusable(prompt) if req.cache_prompt else 0, sp) for sp in fits),
                          key=lambda x: (x[0], -x[1].cache.n_ctx))
        self._spare.remove(spare)
        spare.cache.truncate(keep)  # (0: reset)
        req.n_prefilled = req.n_cached = keep
        return spare.cache

    def _admit(self, req: _Request) -> bool:
        try:
            req.cache = self._cache_for(req)
        except Exception as e:  # noqa: BLE001 - e.g. MemoryError: fail this request, not the engine
            self._finish(req, "error", error=e)
            return False
        req.t_admit = time.perf_counter()
        return True

    def _run(self, plan: StepPlan) -> None:
        decoding = [it.request for it in plan.items if not it.prefill and not it.request.finished]
        together = decoding if self.batch_decode and len(decoding) >= 2 else []
        groups = [together[i:i + self.n_ubatch] for i in range(0, len(together), self.n_ubatch)]
        # the device loops launched ahead for other sets of requests than this step's: their tokens first
        self._drain_ahead(keep={self._key(g) for g in groups} if together else {self._key([r]) for r in decoding})
        for group in groups:
            group = [r for r in group if not r.finished]
            if group:
                self._decode_together(group)
        for item in plan.items:
            req = item.request
            if req.finished or (together and not item.prefill):
                continue
            try:
                self._advance(req, item)
            except Exception as e:  # noqa: BLE001 - one request's failure must not stop the others
                self._fail(req, e)

    def _fail(self, req: _Request, e: BaseException) -> None:
        self.scheduler.remove(req)
        self._finish(req, "error", error=e)

    def _chunk(self, reqs: list[_Request], launched: int = 0) -> int:
        """Steps the next device chunk of these requests may take: greedy_chunk, within each one's context and
        tokens left (less the `launched` steps whose tokens are not emitted yet)."""
        return min([self.greedy_chunk] + [min(r.n_ctx - r.cache.n_past, r.tokens_left - launched) for r in reqs])

    def _device_rows(self, reqs: list[_Request]) -> list[tuple] | None:
        """Each request's device sampler settings, if every one has them (`Sampler.device_row`)."""
        if not self._device_sampling:
            return None
        rows = [r.sampler.device_row(self._top_k) for r in reqs]
        return None if any(row is None for row in rows) else rows

    @staticmethod
    def _key(reqs: list[_Request]) -> tuple[int, ...]:
        return tuple(r.request_id for r in reqs)

    def _decode_chunk(self, reqs: list[_Request]) -> Any:
        """Up to greedy_chunk tokens of each request from a loop on the device (`Model.start_seqs`: plain greedy,
        or drawn there by each one's sampler settings), and the next chunk launched before these are read (kept
        ahead for the next step); (requests, steps) ids, or None where these requests decode on the host this step.
        Raises what the loop raised, with nothing of it kept ahead."""
        try:
            return self._decode_chunk_of(reqs)
        except BaseException:
            self._ahead.pop(self._key(reqs), None)
            raise

    def _decode_chunk_of(self, reqs: list[_Request]) -> Any:
        key = self._key(reqs)
        greedy = all(r.params.is_plain_greedy for r in reqs)
        rows = None if greedy else self._device_rows(reqs)
        ahead = self._ahead.pop(key, None)
        if ahead is not None:
            chunk = ahead[1]
        else:
            n = self._chunk(reqs)
            if n < 2 or (rows is None and not greedy) or not self._loops:
                return None
            chunk = self._launch(reqs, rows, n, lambda u: self.model.start_seqs(
                [r.tokens[-1] for r in reqs], [r.cache for r in reqs], n, rows, u, top=self._top_k))
            if chunk is None:  # (sampled: this model's steps do not loop on the device; the host samples)
                self._device_sampling = False
                return None
        n = self._chunk(reqs, chunk.steps)
        if n > 0 and self._chunks_ahead and (greedy or rows is not None):
            nxt = self._launch(reqs, rows, n, lambda u: chunk.follow(n, u))
            if nxt is not None:
                self._ahead[key] = (reqs, nxt)
        return chunk.ids()

    def _launch(self, reqs: list[_Request], rows: list[tuple] | None, n: int, start: Callable[[Any], Any]) -> Any:
        """start(uniforms): n steps launched with each sampled request's next n draws (made ahead; those of the
        steps it did not launch put back), or None (sampled: the device will not draw for this model)."""
        sampled = reqs if rows is not None else []
        uniforms = np.stack([r.sampler.draw_ahead(n) for r in sampled], 1) if sampled else None
        chunk = None
        try:
            chunk = start(uniforms)
        finally:
            for r in sampled:
                r.sampler.drew(0 if chunk is None else chunk.steps)
        return chunk

    def _drain_ahead(self, keep: set) -> None:
        """Emit the tokens of the chunks launched ahead for sets of requests other than `keep`'s (those of requests
        still generating: a set loses a member when one finishes; the others' tokens are theirs)."""
        for key in [k for k in self._ahead if k not in keep]:
            reqs, chunk = self._ahead.pop(key)
            try:
                ids = chunk.ids()
            except Exception as e:  # noqa: BLE001 - the loop failed for all of them
                for r in reqs:
                    if not r.finished:
                        self._fail(r, e)
                continue
            for r, row in zip(reqs, ids):
                try:
                    if not r.finished:
                        self._emit_drawn(r, row)
                except Exception as e:  # noqa: BLE001 - one request's failure must not stop the others
                    self._fail(r, e)

    def _emit_drawn(self, req: _Request, row: Any) -> None:
        """Emit a request's tokens from a device loop (up to its stop: the rest are dropped)."""
        for token in row:
            if token < 0:
                raise ValueError("logits contain NaN or +inf")
            if self._emit(req, int(token), None):
                break

    def _decode_together(self, reqs: list[_Request]) -> None:
        """One decode token for each of several requests in one forward, then each one's sampling."""
        greedy = all(r.params.is_plain_greedy for r in reqs)
        try:
            out = self._decode_chunk(reqs)  # (tokens past a request's stop are dropped, like `_advance`'s)
        except Exception as e:  # noqa: BLE001 - the loop failed for all of them (their caches may hold its steps)
            for r in reqs:
                self._fail(r, e)
            return
        drawn = out is not None
        try:
            if not drawn:
                items = [(r.tokens[-1:], r.cache) for r in reqs]
                out = (self.model.forward_seqs(items, argmax=True) if greedy
                       else self.model.forward_seqs(items, **self._seqs_top))
        except Exception as e:  # noqa: BLE001 - the step failed for all of them
            if any(getattr(r.cache, "recurrent_layers", True) for r in reqs):  # state half stepped: no retry
                for r in reqs:
                    self._fail(r, e)
                return
            # attention caches only: the failed step wrote at most the cells the retry writes again
            self._log(f"decoding {len(reqs)} requests together failed ({e.__class__.__name__}: {e}); "
                      "decoding each on its own from now on")
            self.batch_decode = False
            for r in reqs:
                try:
                    self._advance(r, WorkItem(r, 1, prefill=False))
                except Exception as e2:  # noqa: BLE001 - one request's failure must not stop the others
                    self._fail(r, e2)
            return
        for r, row in zip(reqs, out):
            try:
                if drawn:
                    self._emit_drawn(r, row)
                elif greedy:
                    self._emit(r, int(row), None)
                else:
                    self._sample(r, row)
            except Exception as e:  # noqa: BLE001 - one request's failure must not stop the others
                self._fail(r, e)

    def _advance(self, req: _Request, item: WorkItem) -> None:
        if item.prefill:
            if not req.t_prefill:
                req.t_prefill = time.perf_counter()
            ids = req.tokens[req.n_prefilled:req.n_prefilled + item.n_tokens]
            done = len(ids) == req.prefill_remaining
            logits = self.model.forward(ids, req.cache, last_only=True, **(self._top if done else {}))
            req.n_prefilled += len(ids)
            if not done:
                return
        else:
            out = self._decode_chunk([req])
            if out is not None:
                self._emit_drawn(req, out[0])
                return
            logits = self.model.forward(req.tokens[-1:], req.cache, last_only=True, **self._top)
        self._sample(req, logits if self._top else logits[-1])

    def _sample(self, req: _Request, row: Any) -> None:
        token, lp = req.sampler.sample(row, req.tokens)
        self._emit(req, token, lp)

    def _emit(self, req: _Request, token: int, lp: TokenLogprob | None) -> bool:
        """Append the chosen token, stream its text, finish the request if it ends here (True then)."""
        req.tokens.append(token)
        if not req.t_first:
            req.t_first = time.perf_counter()
        if req.logprobs is not None and lp is not None:
            req.logprobs.append(lp)
        piece = "" if token in req.checker.eog else req.decoder.push(token)
        text, reason = req.checker.step(token, piece)
        if reason is None and len(req.tokens) - 1 >= req.n_ctx:  # (every token but this one is in the cache)
            reason = "length"
            text += req.checker.finish("length")
        if reason == "length":
            text += req.decoder.flush()  # a character cut by the end: U+FFFD, as detokenize gives
        req.text.append(text)
        assert req.handle is not None
        req.handle._push(Event("token", text, token, lp))
        if reason is not None:
            self.scheduler.remove(req)
            self._finish(req, reason)
        return reason is not None

    def _finish(self, req: _Request, reason: str, tail: str = "", error: BaseException | None = None) -> None:
        """End a request: free its cache, build its result, tell its handle."""
        if req.finished:
            return
        req.finished = True
        if req.cache is not None and hasattr(req.cache, "truncate"):
            # the tokens at positions below n_past (greedy steps past a stop wrote more: not kept); none after
            # an error, which may leave a step half written
            held = [] if reason == "error" else req.tokens[:min(req.cache.n_past, len(req.tokens))]
            if len(self._spare) >= self.scheduler.max_running:
                self._spare.pop(0)  # the least recently finished
            self._spare.append(_Spare(req.cache, held))
        req.cache = None
        req.t_end = time.perf_counter()
        if tail:
            req.text.append(tail)
        assert req.handle is not None
        if tail:
            req.handle._push(Event("token", tail))
        gen = req.generated
        result = GenerationResult(
            text="".join(req.text), token_ids=gen, finish_reason=reason,
            usage=Usage(req.n_prompt, len(gen), req.n_cached), stats=req.stats(), logprobs=req.logprobs,
            stop=req.checker.matcher.matched, error=error)
        req.handle._push(Event("done", finish_reason=reason, result=result))

    # -- the background loop ----------------------------------------------------------------------
    def start(self) -> "Engine":
        """Run the engine loop in a daemon thread (idempotent)."""
        with self._cv:
            if self._closed:
                raise RuntimeError("the engine is shut down")
            if self._thread is None or not self._thread.is_alive():
                self._stopping = False
                self._thread = threading.Thread(target=self._loop, name="zinc-engine", daemon=True)
                self._thread.start()
        return self

    def _loop(self) -> None:
        while True:
            with self._cv:
                while not self._stopping and not (self._inbox or self._cancels or len(self.scheduler)):
                    self._cv.wait()
                if self._stopping:
                    return
            try:
                self.step()
            except Exception as e:  # noqa: BLE001 - a bug in a step: fail every request, keep serving
                self._log(f"engine step failed: {e.__class__.__name__}: {e}")
                self._fail_all(e)

    def _fail_all(self, error: BaseException, reason: str = "error") -> None:
        with self._step_lock:
            self._take_inbox()
            for req in list(self.scheduler.waiting) + list(self.scheduler.running):
                self.scheduler.remove(req)
                if reason == "cancelled":
                    self._finish(req, reason, req.checker.finish(reason))
                else:
                    self._finish(req, reason, error=error)

    def shutdown(self, timeout: float | None = 10.0) -> None:
        """Stop the loop thread (after its current step), cancel every request left, refuse new ones."""
        with self._cv:
            self._closed = self._stopping = True
            self._cv.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                self._log(f"the engine thread did not stop within {timeout} s")
            self._thread = None
        self._fail_all(RuntimeError("the engine was shut down"), reason="cancelled")
        self._spare.clear()

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def __repr__(self) -> str:
        return (f"Engine(max_running={self.scheduler.max_running}, n_ctx={self.n_ctx}, "
                f"waiting={self.n_waiting}, running={self.n_running}, threaded={self.threaded})")


def generate_ids(engine: Engine, prompt_ids: Sequence[int], params: SamplingParams) -> GenerationResult:
    """Submit one request and wait for it (a convenience for tests and scripts)."""
    return engine.submit(prompt_ids, params).result()


__all__ = ["Engine", "Event", "GenerationResult", "RequestHandle", "RequestStats", "Usage",
           "FINISH_REASONS", "generate_ids"]


def _takes(fn: Callable, name: str) -> bool:
    """Whether `fn` has a parameter `name`."""
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
