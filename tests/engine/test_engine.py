"""The engine on tiny synthetic models: requests that share the model give the same tokens as alone
(greedy and seeded), cancellation frees the cache without disturbing the others, finish reasons
(stop string, max_tokens, end of generation, full context), streaming, chat parsing, threads,
shutdown, and the scheduler's chunking and admission rules."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from zinc.api import load
from zinc.engine.engine import Engine
from zinc.engine.generate import chat, engine_for
from zinc.engine.sampler import SamplingParams
from zinc.engine.scheduler import Scheduler
from zinc.synth import write_model

PROMPT_A = "The quick brown fox jumps over the lazy dog. " * 2
PROMPT_B = "Hello"
SEEDED = dict(temperature=0.9, top_k=0, top_p=1.0, min_p=0.0, seed=7)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = write_model(tmp_path_factory.mktemp("m") / "qwen3-tiny.gguf", "qwen3-tiny", ftype="Q4_K_M").path
    m = load(path, n_ctx=256, n_ubatch=8)  # small ubatch: prompts take several chunks
    yield m
    m.close()


@pytest.fixture
def engine(model):
    eng = Engine(model, max_running=4)
    yield eng
    eng.shutdown()


def _alone(model, ids, params):
    eng = Engine(model, max_running=1)
    try:
        return eng.submit(ids, params).result()
    finally:
        eng.shutdown()


# -- correctness ------------------------------------------------------------------------------------

def test_greedy_matches_teacher_forced_argmax(model, engine):
    ids = model.tokenize(PROMPT_A)
    assert len(ids) > 2 * model.n_ubatch
    r = engine.submit(ids, SamplingParams.greedy(max_tokens=6)).result()
    seq, ref = list(ids), []
    for _ in range(6):
        tok = int(np.argmax(model.logits(seq)[-1]))
        ref.append(tok)
        seq.append(tok)
    assert r.token_ids == ref
    assert r.finish_reason == "length" and r.usage.prompt_tokens == len(ids) and r.usage.completion_tokens == 6
    assert r.text == model.tokenizer.decode(ref)


@pytest.mark.parametrize("kind", ["greedy", "seeded"])
def test_two_requests_together_match_alone(model, engine, kind):
    mk = (lambda n: SamplingParams.greedy(max_tokens=n)) if kind == "greedy" else \
        (lambda n: SamplingParams(max_tokens=n, **SEEDED))
    ia, ib = model.tokenize(PROMPT_A), model.tokenize(PROMPT_B)
    alone_a, alone_b = _alone(model, ia, mk(12)), _alone(model, ib, mk(16))
    ha, hb = engine.submit(ia, mk(12)), engine.submit(ib, mk(16))
    engine.step()
    assert engine.n_running == 2 and engine.n_caches == 2  # both share the model from the first step
    ra, rb = ha.result(), hb.result()
    assert ra.token_ids == alone_a.token_ids and ra.text == alone_a.text
    assert rb.token_ids == alone_b.token_ids and rb.text == alone_b.text
    assert engine.n_caches == 0 and engine.idle


def test_cancel_midway_frees_cache_and_spares_the_other(model, engine):
    ia, ib = model.tokenize(PROMPT_A), model.tokenize(PROMPT_B)
    params = SamplingParams(max_tokens=20, ignore_eos=True, **SEEDED)
    alone_b = _alone(model, ib, params)
    ha, hb = engine.submit(ia, params), engine.submit(ib, params)
    req_a = ha._req
    while len(req_a.generated) < 3:
        engine.step()
    assert engine.n_caches == 2 and not hb.done
    ha.cancel()  # no step is running: handled at once
    assert req_a.cache is None and engine.n_caches == 1 and engine.n_running == 1
    ra = ha.result()
    assert ra.finish_reason == "cancelled" and 3 <= ra.usage.completion_tokens < 20
    rb = hb.result()
    assert rb.finish_reason == "length" and rb.token_ids == alone_b.token_ids and rb.text == alone_b.text


def test_max_running_bounds_caches(model):
    eng = Engine(model, max_running=2)
    try:
        hs = [eng.submit(model.tokenize(PROMPT_B), SamplingParams.greedy(max_tokens=4)) for _ in range(5)]
        peak = 0
        while eng.step():
            peak = max(peak, eng.n_caches)
            assert eng.n_running <= 2 and eng.n_caches + eng.n_spare <= 2
        assert peak == 2
        outs = {tuple(h.result().token_ids) for h in hs}
        assert len(outs) == 1  # same prompt, greedy: same tokens whatever the queueing
        assert all(h.result().stats.queue_s >= 0 for h in hs)
    finally:
        eng.shutdown()


# -- finish reasons -----------------------------------------------------------------------------------

def test_max_tokens_and_stats(model, engine):
    r = engine.submit(model.tokenize(PROMPT_A), SamplingParams(max_tokens=5, **SEEDED)).result()
    assert r.finish_reason == "length" and r.usage.completion_tokens == 5 and len(r.token_ids) == 5
    s = r.stats
    assert s.ttft_s > 0 and s.prefill_s > 0 and s.prefill_tok_s > 0 and s.decode_tok_s > 0
    assert s.prompt_tokens == r.usage.prompt_tokens and s.generated_tokens == 5
    assert "tok/s" in s.summary() and r.usage.total_tokens == r.usage.prompt_tokens + 5


def test_end_of_generation_token(model, engine):
    eos = model.tokenizer.eos_id
    r = engine.submit(model.tokenize(PROMPT_B), SamplingParams.greedy(max_tokens=10, logit_bias={eos: 1e4})).result()
    assert r.finish_reason == "stop" and r.token_ids == [eos] and r.text == "" and r.stop is None
    r = engine.submit(model.tokenize(PROMPT_B), SamplingParams.greedy(max_tokens=3, logit_bias={eos: 1e4},
                                                                      ignore_eos=True)).result()
    assert r.finish_reason == "length" and r.token_ids == [eos] * 3


def test_stop_string_across_tokens(model, engine):
    ids = model.tokenize(PROMPT_B)
    params = dict(max_tokens=24, **SEEDED)
    full = engine.submit(ids, SamplingParams(**params)).result()
    pieces = [model.tokenizer.token_to_piece(t).decode("utf-8", "replace") for t in full.token_ids]
    # a stop string made of the end of token 3 and the start of token 4 (both non-empty pieces)
    k = next(i for i in range(3, len(pieces) - 1) if pieces[i] and pieces[i + 1]
             and "\ufffd" not in pieces[i] + pieces[i + 1])
    stop = pieces[k][-1:] + pieces[k + 1][:1]
    pos = full.text.find(stop)
    r = engine.submit(ids, SamplingParams(stop=[stop], **params)).result()
    assert r.finish_reason == "stop" and r.stop == stop
    assert r.text == full.text[:pos] and stop not in r.text
    assert r.token_ids == full.token_ids[:len(r.token_ids)]


def test_full_context_ends_with_length(model):
    ids = model.tokenize(PROMPT_B)
    eng = Engine(model, n_ctx=len(ids) + 4)
    try:
        r = eng.submit(ids, SamplingParams(max_tokens=None, **SEEDED)).result()
        assert r.finish_reason == "length" and r.usage.completion_tokens == 5
        with pytest.raises(ValueError, match="context"):
            eng.submit(list(range(len(ids) + 5)), SamplingParams())
    finally:
        eng.shutdown()


def test_bad_requests(model, engine):
    with pytest.raises(ValueError, match="empty"):
        engine.submit([], SamplingParams())
    with pytest.raises(ValueError, match="out of range"):
        engine.submit([model.n_vocab], SamplingParams())
    with pytest.raises(ValueError, match="logit_bias"):
        engine.submit([1], SamplingParams(logit_bias={model.n_vocab + 3: 1.0}))


# -- the Python API -------------------------------------------------------------------------------

def test_generate_stream_concatenates_to_text(model):
    r = model.generate(PROMPT_A, max_tokens=16, **SEEDED)
    s = model.generate(PROMPT_A, max_tokens=16, stream=True, **SEEDED)
    chunks = list(s)
    assert all(isinstance(c, str) and c for c in chunks)
    assert "".join(chunks) == r.text and s.text == r.text
    assert s.finish_reason == r.finish_reason == "length"
    assert s.usage.prompt_tokens == r.usage.prompt_tokens and r.usage.completion_tokens == 16
    assert s.usage.cached_tokens == r.usage.prompt_tokens - 1  # the model's engine kept r's cache
    g = model.generate(model.tokenize(PROMPT_A), max_tokens=16, temperature=0)
    assert g.token_ids == model.generate(PROMPT_A, max_tokens=16, temperature=0).token_ids


def test_generate_logit_bias_and_penalties(model):
    base = model.generate(PROMPT_B, max_tokens=6, temperature=0)
    first = base.token_ids[0]
    banned = model.generate(PROMPT_B, max_tokens=6, temperature=0, logit_bias={first: float("-inf")})
    assert banned.token_ids[0] != first
    rep = model.generate(PROMPT_B, max_tokens=6, temperature=0, repetition_penalty=1e6, penalty_last_n=-1)
    assert len(set(rep.token_ids)) == len(rep.token_ids)  # a huge penalty never repeats a token
    lp = model.generate(PROMPT_B, max_tokens=3, temperature=0, top_logprobs=2)
    assert len(lp.logprobs) == 3 and len(lp.logprobs[0].top) == 2


def test_abandoned_stream_is_cancelled(model):
    s = model.generate(PROMPT_B, max_tokens=50, stream=True, **SEEDED)
    next(s)
    h = s.handle
    s.close()
    assert h.finish_reason == "cancelled" and engine_for(model).n_caches == 0


def test_generate_from_threads(model):
    alone = [model.generate(p, max_tokens=8, **SEEDED).token_ids for p in (PROMPT_A, PROMPT_B)]
    out: dict[int, list[int]] = {}

    def work(i: int, p: str) -> None:
        out[i] = model.generate(p, max_tokens=8, **SEEDED).token_ids

    ts = [threading.Thread(target=work, args=(i, p)) for i, p in enumerate((PROMPT_A, PROMPT_B))]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert [out[0], out[1]] == alone


def test_background_thread_cancel_and_shutdown(model):
    eng = Engine(model, max_running=1).start()
    assert eng.threaded
    seen: list = []
    h = eng.submit(model.tokenize(PROMPT_B), SamplingParams(max_tokens=200, ignore_eos=True, **SEEDED),
                   on_event=seen.append)
    queued = eng.submit(model.tokenize(PROMPT_B), SamplingParams(max_tokens=200, **SEEDED))
    it = iter(h)
    got = [next(it) for _ in range(3)]
    assert all(ev.kind == "token" for ev in got)
    h.cancel()
    assert h.result(timeout=30).finish_reason == "cancelled"
    assert seen[-1].kind == "done" and seen[-1].finish_reason == "cancelled" and len(seen) >= 4
    eng.shutdown()
    assert not eng.threaded and queued.result().finish_reason in ("cancelled", "length", "stop")
    with pytest.raises(RuntimeError, match="shut down"):
        eng.submit([1], SamplingParams())


# -- scripted replies: exact text, UTF-8 and chat parsing -------------------------------------------

class _Cache:
    def __init__(self, n_ctx: int) -> None:
        self.n_ctx, self.n_past, self.calls = n_ctx, 0, 0


class ScriptedModel:
    """A real model's tokenizer and metadata with a forward that makes `script` the only choice.

    Its n_ubatch is large, so the prompt is one forward and the k-th later forward yields script[k]."""

    def __init__(self, real, script: list[int], template: str | None = None) -> None:
        self.real, self.script = real, script
        self.n_vocab, self.n_ctx, self.n_ubatch = real.n_vocab, real.n_ctx, 4096
        self.tokenizer, self.config, self.path = real.tokenizer, real.config, real.path
        self.metadata = dict(real.metadata)
        if template is not None:
            self.metadata["tokenizer.chat_template"] = template

    def tokenize(self, text, add_special=True, parse_special=False):
        return self.real.tokenize(text, add_special=add_special, parse_special=parse_special)

    def new_cache(self, n_ctx=None):
        return _Cache(n_ctx or self.n_ctx)

    def forward(self, ids, cache, last_only=False):
        cache.n_past += len(ids)
        k, cache.calls = cache.calls, cache.calls + 1
        row = np.zeros((1, self.n_vocab), np.float32)
        row[0, self.script[min(k, len(self.script) - 1)]] = 50.0
        return row


def test_utf8_split_over_tokens_is_never_broken(model):
    text = "héllo wörld"
    script = model.tokenize(text, add_special=False)
    assert any(not model.tokenizer.token_to_piece(t).decode("utf-8", "ignore") for t in script)  # split chars
    sm = ScriptedModel(model, script + [model.tokenizer.eos_id])
    eng = Engine(sm)
    chunks = list(eng.submit(model.tokenize(PROMPT_B), SamplingParams.greedy(max_tokens=40)).text_chunks())
    assert "".join(chunks) == text and all("\ufffd" not in c for c in chunks)
    assert "é" in chunks or any("é" in c for c in chunks)
    eng.shutdown()


QWEN_LIKE = ("{%- for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] "
             "+ '<|im_end|>\\n' }}{%- endfor %}{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
             "{%- endif %}{# <tool_call> <think> #}")


def test_chat_on_tiny_model(model):
    msgs = [{"role": "user", "content": "Hi there"}]
    c = model.chat(msgs, max_tokens=12, **SEEDED)
    assert c.prompt.endswith("<|im_start|>assistant\n") and "<|im_start|>user\nHi there<|im_end|>" in c.prompt
    assert c.usage.prompt_tokens == len(model.tokenize(c.prompt, parse_special=True))
    assert c.message["role"] == "assistant" and isinstance(c.content, str)
    assert c.finish_reason in ("length", "stop") and c.usage.completion_tokens <= 12
    s = model.chat(msgs, max_tokens=12, stream=True, **SEEDED)
    deltas = list(s)
    assert "".join(d.content for d in deltas) == s.result.content == c.content


def test_chat_parses_reasoning_and_tool_calls(model):
    tok = model.tokenizer
    reply = "<think>hmm</think>Paris"
    sm = ScriptedModel(model, model.tokenize(reply, add_special=False, parse_special=True) + [tok.eos_id], QWEN_LIKE)
    c = chat(sm, [{"role": "user", "content": "Capital of France?"}], max_tokens=40, temperature=0)
    assert (c.reasoning_content, c.content, c.finish_reason) == ("hmm", "Paris", "stop")
    assert c.text == reply
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    sm = ScriptedModel(model, model.tokenize(call, add_special=False, parse_special=True) + [tok.eos_id], QWEN_LIKE)
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    c = chat(sm, [{"role": "user", "content": "Weather?"}], tools=tools, max_tokens=80, temperature=0)
    assert c.finish_reason == "tool_calls" and c.content == ""
    assert c.tool_calls[0]["function"]["name"] == "get_weather"
    assert c.message["tool_calls"] == c.tool_calls


# -- the scheduler --------------------------------------------------------------------------------

class _Req:
    def __init__(self, rid: int, n_prompt: int) -> None:
        self.request_id, self.n_prompt, self.n_prefilled = rid, n_prompt, 0

    @property
    def prefill_remaining(self) -> int:
        return self.n_prompt - self.n_prefilled


def test_scheduler_chunks_budget_and_admission():
    s = Scheduler(max_running=2, n_ubatch=8, step_tokens=10)
    a, b, c = _Req(1, 20), _Req(2, 3), _Req(3, 5)
    for r in (a, b, c):
        s.add(r)
    assert s.admit(lambda r: True) == [a, b] and list(s.waiting) == [c]
    plan = s.schedule()
    assert [(it.request, it.n_tokens, it.prefill) for it in plan.items] == [(a, 8, True)]  # b would exceed 10
    a.n_prefilled = 8
    b.n_prefilled = 3  # b now decodes: it goes first, then a's next chunk
    plan = s.schedule()
    assert [(it.request, it.n_tokens, it.prefill) for it in plan.items] == [(b, 1, False), (a, 8, True)]
    a.n_prefilled = 13  # chunks restart at multiples of n_ubatch: 13 → 16
    assert s.chunk_size(a, a.prefill_remaining) == 3
    s.finished([b])
    assert s.admit(lambda r: False) == [] and len(s) == 1  # a refused admission is dropped


class _Counting:
    """A model whose new caches are counted (the rest passes through)."""

    def __init__(self, real) -> None:
        self.real, self.made = real, []

    def __getattr__(self, name):
        return getattr(self.real, name)

    def new_cache(self, n_ctx=None):
        self.made.append(self.real.new_cache(n_ctx))
        return self.made[-1]


@pytest.mark.parametrize("preset", ["qwen3-tiny", "qwen35-tiny"])
def test_finished_caches_are_reused_reset(tmp_path, preset):
    """Requests one after another get the first one's cache back, reset: the same tokens as the first (a
    recurrent family's state zeroed too); a longer request than the spare holds gets a new cache instead, and
    shutdown drops the spares."""
    path = write_model(tmp_path / f"{preset}.gguf", preset, ftype="Q8_0").path
    real = load(path, n_ctx=1024, n_ubatch=8)
    try:
        m = _Counting(real)
        eng = Engine(m, max_running=2)
        ids = real.tokenize(PROMPT_A)
        params = SamplingParams(max_tokens=10, ignore_eos=True, **SEEDED)
        first = eng.submit(ids, params).result()
        assert len(m.made) == 1 and m.made[0].n_ctx == 256 and eng.n_spare == 1  # (prompt + 10) up to 256
        for _ in range(2):
            again = eng.submit(ids, params).result()
            assert again.token_ids == first.token_ids and again.text == first.text
        assert len(m.made) == 1 and eng.n_spare == 1
        long = eng.submit(ids, SamplingParams.greedy(max_tokens=300)).result()
        assert len(m.made) == 2 and m.made[1].n_ctx == 512 and long.usage.completion_tokens == 300
        eng.shutdown()
        assert eng.n_spare == 0
    finally:
        real.close()


class _GreedyCounting(_Counting):
    """Also counts greedy `start_seqs` calls (the device-side loop's entry)."""

    def __init__(self, real) -> None:
        super().__init__(real)
        self.greedy_calls = 0

    def start_seqs(self, firsts, caches, n, rows=None, uniforms=None, top=128):
        self.greedy_calls += rows is None
        return self.real.start_seqs(firsts, caches, n, rows, uniforms, top)


def _run_all(model, chunk, jobs, n_ctx=None, batch_decode=True):
    eng = Engine(model, max_running=4, greedy_chunk=chunk, n_ctx=n_ctx, batch_decode=batch_decode)
    try:
        hs = [eng.submit(ids, p) for ids, p in jobs]
        return [h.result() for h in hs]
    finally:
        eng.shutdown()


def test_greedy_chunks_give_the_one_step_results(model):
    """Greedy requests decoded up to 8 tokens a step through `Model.start_seqs` end exactly as one token a step:
    max_tokens not a multiple of the chunk, a stop string inside a chunk, a full context, two at once, and a
    penalised greedy request (not plain: one step at a time); requests decoding together (one forward) end the
    same too."""
    ia, ib = model.tokenize(PROMPT_A), model.tokenize(PROMPT_B)
    probe = _run_all(model, 1, [(ib, SamplingParams.greedy(max_tokens=30, ignore_eos=True))])[0]
    mid = len(probe.text) // 2
    stop = probe.text[mid:mid + 3]
    assert stop.strip() and probe.text.index(stop) > 0
    jobs = [(ia, SamplingParams.greedy(max_tokens=13)), (ib, SamplingParams.greedy(max_tokens=30, stop=[stop])),
            (ib, SamplingParams.greedy(max_tokens=11, repeat_penalty=1.3))]
    counted = _GreedyCounting(model)
    one = _run_all(model, 1, jobs, batch_decode=False)
    chunked, together = _run_all(counted, 8, jobs, batch_decode=False), _run_all(model, 8, jobs)
    assert counted.greedy_calls >= 3
    for a, b, c in zip(one, chunked, together):
        assert (a.token_ids, a.text, a.finish_reason) == (b.token_ids, b.text, b.finish_reason)
        assert (a.token_ids, a.text, a.finish_reason) == (c.token_ids, c.text, c.finish_reason)
    assert chunked[1].finish_reason == "stop" and chunked[1].usage.completion_tokens < 30
    full = [(ib, SamplingParams.greedy(ignore_eos=True))]
    a, b = _run_all(model, 1, full, n_ctx=len(ib) + 11)[0], _run_all(model, 8, full, n_ctx=len(ib) + 11)[0]
    assert (a.token_ids, a.finish_reason) == (b.token_ids, b.finish_reason) and a.finish_reason == "length"
    assert a.usage.completion_tokens == 12  # 11 fed after the prompt fill the context, and the last one chosen


class _SeqsCounting(_Counting):
    """Also counts `forward_seqs` calls and whether they asked for argmax ids, and the sizes of greedy `start_seqs`
    calls of several sequences."""

    def __init__(self, real) -> None:
        super().__init__(real)
        self.seqs_calls: list[tuple[int, bool]] = []
        self.greedy_calls: list[tuple[int, int]] = []

    def forward_seqs(self, items, argmax=False):
        items = list(items)
        self.seqs_calls.append((len(items), argmax))
        return self.real.forward_seqs(items, argmax)

    def start_seqs(self, firsts, caches, n, rows=None, uniforms=None, top=128):
        if rows is None and len(caches) > 1:
            self.greedy_calls.append((len(caches), n))
        return self.real.start_seqs(firsts, caches, n, rows, uniforms, top)


def test_requests_decode_together(model):
    """Three requests running at once decode in one forward a step (`Model.forward_seqs`): the tokens equal those of
    each decoded alone, log-probabilities too; all plain greedy: argmax ids only, up to the greedy chunk's 8 steps at
    once (`Model.greedy_seqs`, a stop inside them dropping the rest); one needing logits: logits for all, a step at
    a time. With batch_decode=False no step goes through forward_seqs or greedy_seqs."""
    ia, ib = model.tokenize(PROMPT_A), model.tokenize(PROMPT_B)
    plain = [(ia, SamplingParams.greedy(max_tokens=9, ignore_eos=True)),
             (ib, SamplingParams.greedy(max_tokens=12, ignore_eos=True)), (ia[:5], SamplingParams.greedy(max_tokens=7))]
    mixed = plain[:2] + [(ib[:6], SamplingParams.greedy(max_tokens=10, ignore_eos=True, logprobs=True))]
    for jobs in (plain, mixed):
        alone = _run_all(model, 1, jobs, batch_decode=False)
        counted = _SeqsCounting(model)
        together = _run_all(counted, 8, jobs)
        if jobs is plain:  # (the first tokens come with the prompts) the third's last 6 with the others', the
            assert counted.greedy_calls == [(3, 6), (2, 2)] and not counted.seqs_calls  # first's last 2, then alone
        else:
            assert not counted.greedy_calls and max(n for n, _ in counted.seqs_calls) == 3
            assert all(not am for _, am in counted.seqs_calls)
        for a, b in zip(alone, together):
            assert (a.token_ids, a.text, a.finish_reason) == (b.token_ids, b.text, b.finish_reason)
        lp = [np.array([t.logprob for t in r.logprobs]) for r in (alone[2], together[2]) if jobs is mixed]
        assert not lp or np.abs(lp[0] - lp[1]).max() < 1e-3
    counted = _SeqsCounting(model)
    _run_all(counted, 8, plain, batch_decode=False)
    assert not counted.seqs_calls and not counted.greedy_calls


class _SeqsFailing(_Counting):
    """forward_seqs raises (a backend's batched step broken)."""

    def forward_seqs(self, items, argmax=False):
        raise RuntimeError("batched kernel unavailable")


@pytest.mark.parametrize("preset", ["qwen3-tiny", "qwen35-tiny"])
def test_a_failing_batched_step_falls_back_to_one_at_a_time(tmp_path, preset):
    """Requests whose batched step fails decode on their own instead (attention caches: the retry rewrites the same
    cells), with the same tokens, and the engine says so once; with recurrent state they fail (it is half stepped)."""
    model = load(write_model(tmp_path / f"{preset}.gguf", preset, ftype="Q8_0").path, n_ctx=256, n_ubatch=8)
    ia, ib = model.tokenize(PROMPT_A), model.tokenize(PROMPT_B)
    jobs = [(ia, SamplingParams.greedy(max_tokens=6, ignore_eos=True)),
            (ib, SamplingParams.greedy(max_tokens=5, ignore_eos=True))]
    alone = _run_all(model, 1, jobs, batch_decode=False)
    logs: list[str] = []
    eng = Engine(_SeqsFailing(model), max_running=4, log=logs.append)
    try:
        hs = [eng.submit(ids, p) for ids, p in jobs]
        if model.new_cache().recurrent_layers:
            for h in hs:
                with pytest.raises(RuntimeError, match="batched kernel"):
                    h.result()
        else:
            got = [h.result() for h in hs]
            assert [r.token_ids for r in got] == [r.token_ids for r in alone]
            assert len(logs) == 1 and "on its own" in logs[0] and not eng.batch_decode
    finally:
        eng.shutdown()


def test_sampling_from_the_best_logits_gives_the_whole_rows_tokens(model):
    """Seeded sampled requests (llama.cpp's defaults, penalties, logprobs, top-k off: the whole row fetched) give
    the same tokens whether each step's sampling takes the row's best logits (`TopLogits`, the default) or whole
    rows (`top_logits=0`), alone and decoding together."""
    ia, ib = model.tokenize(PROMPT_A), model.tokenize(PROMPT_B)
    jobs = [(ia, SamplingParams(seed=1, max_tokens=12, ignore_eos=True)),
            (ib, SamplingParams(seed=2, max_tokens=10, ignore_eos=True, repeat_penalty=1.3, temperature=1.5)),
            (ia[:6], SamplingParams(seed=3, max_tokens=9, ignore_eos=True, logprobs=True, top_logprobs=3)),
            (ib[:5], SamplingParams(seed=4, max_tokens=8, ignore_eos=True, top_k=0, temperature=2.0))]
    for together in (False, True):
        rows = _run_all(model, 1, jobs, batch_decode=together)
        eng = Engine(model, max_running=4, greedy_chunk=1, batch_decode=together, top_logits=0)
        try:
            whole = [h.result() for h in [eng.submit(ids, p) for ids, p in jobs]]
        finally:
            eng.shutdown()
        for a, b in zip(rows, whole):
            assert a.token_ids == b.token_ids and a.finish_reason == b.finish_reason
        lp = [np.array([t.logprob for t in r.logprobs]) for r in (rows[2], whole[2])]
        assert np.abs(lp[0] - lp[1]).max() < 1e-4
        assert [[t for t, _ in x.top] for x in rows[2].logprobs] == [[t for t, _ in x.top] for x in whole[2].logprobs]


class _Draws:
    def __init__(self, draws) -> None:
        self.draws = list(draws)

    def random(self) -> float:
        return self.draws.pop(0)


class _Loop:
    """A device loop's chunk, computed at once: n steps from `toks` on the caches, each row's token the argmax (rows
    None) or drawn by `Sampler.sample`'s rule with the step's given uniform (the kernel's equality with that rule is
    tests/backends/test_cuda_kernels.py::test_sample_next); `follow` goes on from its last tokens, as the device's."""

    def __init__(self, owner, caches, toks, n, rows, uniforms) -> None:
        from zinc.engine.sampler import Sampler

        m, toks, out = owner.model, list(toks), []
        for s in range(n):
            if len(caches) == 1:
                logits = m.forward(toks, caches[0], last_only=True)
            else:
                logits = m.forward_seqs([([t], c) for t, c in zip(toks, caches)])
            for i in range(len(caches)):
                if rows is None:
                    toks[i] = int(np.argmax(logits[i]))
                    continue
                t, k, p, mp, need = rows[i]
                smp = Sampler(SamplingParams(temperature=t, top_k=int(k), top_p=p, min_p=mp, min_keep=int(need)),
                              m.n_vocab)
                smp.rng = _Draws([uniforms[s, i]])
                toks[i] = smp.sample(logits[i])[0]
            out.append(list(toks))
        self.owner, self.caches, self.rows, self.last, self.steps = owner, caches, rows, toks, n
        self._ids = np.array(out, np.int32).T

    def ids(self):
        return self._ids

    def follow(self, n, uniforms=None):
        if any(c.n_past + n > c.n_ctx for c in self.caches):
            return None
        self.owner.follows.append((len(self.caches), n))
        return _Loop(self.owner, self.caches, self.last, n, self.rows, uniforms)


class _DeviceLoops:
    """The model with device loops (`start_seqs` chunks that can follow one another), as `_Loop` computes them."""

    loops_on_device = True

    def __init__(self, model) -> None:
        self.model, self.calls, self.follows = model, [], []

    def __getattr__(self, name):
        return getattr(self.model, name)

    def start_seqs(self, firsts, caches, n, rows=None, uniforms=None, top=128):
        self.calls.append((len(caches), n, None if rows is None else [tuple(r) for r in rows]))
        return _Loop(self, list(caches), firsts, n, rows, uniforms)


def test_sampling_on_the_device_gives_the_hosts_tokens(model):
    """Sampled requests whose settings a device sampler takes draw up to greedy_chunk tokens a step there
    (`Model.sample_seqs`, the draws made ahead from each request's generator and the unused ones put back) and end
    with the tokens, text and finish reasons of host sampling a token a step: llama.cpp's defaults, a stop string
    inside a chunk, max_tokens not a multiple of the chunk, greedy, an OpenAI client's defaults (the whole row);
    settings it does not take (top-k off with top-p, penalties, logprobs) sample on the host, alone and decoding
    together."""
    ia, ib = model.tokenize(PROMPT_A), model.tokenize(PROMPT_B)
    probe = _run_all(model, 1, [(ib, SamplingParams(seed=5, max_tokens=30, ignore_eos=True))])[0]
    stop = probe.text[len(probe.text) // 2:len(probe.text) // 2 + 3]
    assert stop.strip() and probe.text.index(stop) > 0
    jobs = [(ia, SamplingParams(seed=1, max_tokens=19, ignore_eos=True)),
            (ib, SamplingParams(seed=5, max_tokens=30, ignore_eos=True, stop=[stop])),
            (ia[:7], SamplingParams(seed=2, max_tokens=11, ignore_eos=True, temperature=1.7, top_k=90, top_p=0.8,
                                    min_p=0.0, min_keep=4)),
            (ib, SamplingParams.greedy(max_tokens=9, ignore_eos=True, repeat_penalty=1.0)),
            (ia[:5], SamplingParams(seed=3, max_tokens=10, ignore_eos=True, top_k=0)),
            (ib, SamplingParams(seed=4, max_tokens=10, ignore_eos=True, presence_penalty=0.5)),
            (ia[:9], SamplingParams(seed=6, max_tokens=10, ignore_eos=True, logprobs=True)),
            (ia[:4], SamplingParams(seed=7, max_tokens=17, ignore_eos=True, temperature=1.0, top_k=0, top_p=1.0,
                                    min_p=0.0))]  # an OpenAI client's defaults: the whole row
    for together in (False, True):
        want = _run_all(model, 1, jobs, batch_decode=together)
        dev = _DeviceLoops(model)
        eng = Engine(dev, max_running=len(jobs), greedy_chunk=8, batch_decode=together)
        try:
            got = [h.result() for h in [eng.submit(ids, p) for ids, p in jobs]]
        finally:
            eng.shutdown()
        for i, (a, b) in enumerate(zip(got, want)):
            assert a.token_ids == b.token_ids and a.text == b.text and a.finish_reason == b.finish_reason, (together, i)
        assert got[1].finish_reason == "stop" and len(got[1].token_ids) < 30
        assert dev.calls and all(n > 1 for _, n, _ in dev.calls) and dev.follows
        drawn = {row for _, _, rows in dev.calls if rows for row in rows}
        assert drawn <= {(0.8, 40, 0.95, 0.05, 1), (1.7, 90, 0.8, 0.0, 4), (0.0, 1, 1.0, 0.0, 1),
                         (1.0, 0, 1.0, 0.0, 1)}, drawn
        assert {(0.8, 40, 0.95, 0.05, 1), (1.7, 90, 0.8, 0.0, 4), (1.0, 0, 1.0, 0.0, 1)} <= drawn


def test_device_loops_fill_the_context_as_the_host(model):
    """A request that runs into the end of its context from device loops chunked ahead ends where one token a step
    on the host ends (the last chunks shortened to the cells left), sampled and greedy."""
    ib = model.tokenize(PROMPT_B)
    for params in (SamplingParams(seed=8, ignore_eos=True), SamplingParams.greedy(ignore_eos=True)):
        want = _run_all(model, 1, [(ib, params)], n_ctx=len(ib) + 21)[0]
        dev = _DeviceLoops(model)
        eng = Engine(dev, max_running=1, greedy_chunk=8, n_ctx=len(ib) + 21)
        try:
            got = eng.submit(ib, params).result()
        finally:
            eng.shutdown()
        assert (got.token_ids, got.finish_reason) == (want.token_ids, want.finish_reason) == (want.token_ids, "length")
        assert len(got.token_ids) == 22 and dev.follows


class _NoSampledLoops(_DeviceLoops):
    """A backend whose steps cannot loop on the device when sampled (`start_seqs` None for them)."""

    def start_seqs(self, firsts, caches, n, rows=None, uniforms=None, top=128):
        if rows is not None:
            self.calls.append((len(caches), n, "refused"))
            return None
        return super().start_seqs(firsts, caches, n, rows, uniforms, top)


def test_sampling_falls_back_to_the_host_once(model):
    """Where the device will not draw (a sampled `start_seqs` gives None) the request samples on the host with the
    same tokens, and the engine stops asking after the first refusal."""
    ib = model.tokenize(PROMPT_B)
    params = SamplingParams(seed=11, max_tokens=20, ignore_eos=True)
    want = _run_all(model, 1, [(ib, params)])[0]
    dev = _NoSampledLoops(model)
    eng = Engine(dev, max_running=1, greedy_chunk=8)
    try:
        got = eng.submit(ib, params).result()
    finally:
        eng.shutdown()
    assert got.token_ids == want.token_ids and dev.calls == [(1, 8, "refused")]


class _FailingLoops(_DeviceLoops):
    """Device loops whose chunks fail when read (a device error)."""

    def start_seqs(self, firsts, caches, n, rows=None, uniforms=None, top=128):
        chunk = super().start_seqs(firsts, caches, n, rows, uniforms, top)

        def broken():
            raise RuntimeError("device lost")
        chunk.ids = broken
        return chunk


def test_a_failing_device_loop_fails_its_requests(model):
    """A device loop that fails fails the requests it decoded (alone and together; not retried: their caches may
    hold its steps) with the error, and the engine goes on with the next ones."""
    ib = model.tokenize(PROMPT_B)
    for n_req in (1, 2):
        eng = Engine(_FailingLoops(model), max_running=2, greedy_chunk=8)
        try:
            hs = [eng.submit(ib, SamplingParams(seed=i, max_tokens=12, ignore_eos=True)) for i in range(n_req)]
            for h in hs:
                with pytest.raises(RuntimeError, match="device lost"):
                    h.result()
            assert eng.submit(ib, SamplingParams(seed=3, max_tokens=1)).result().finish_reason == "length"
        finally:
            eng.shutdown()
