"""Run a validated `GenRequest` on the engine: OpenAI chunks for streaming, one object otherwise.

Chat: the prompt is rendered with `zinc.engine.generate.render_chat` (the GGUF's chat template) and
each choice's text goes through the family's incremental parser (`parser_for`), so reasoning,
content and tool calls stream as separate deltas. `response_format` and `tool_choice` required /
named become a grammar `Constraint` per choice. The choices of `n > 1` run concurrently (seeds
`seed + i`). Every exit path (client gone, error) cancels the choices' engine requests.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any, AsyncIterator

from zinc.engine.generate import chat_template, render_chat, sampling_params
from zinc.server import grammar
from zinc.server.openai import (APIError, GenRequest, chat_chunk, chat_logprobs, completion_chunk,
                                completion_logprobs, new_id, now)
from zinc.tokenizer.parsing import family_of, parser_for


class _Choice:
    """One choice: its engine job, parser and what it produced so far."""

    def __init__(self, index: int, job: Any, parser: Any) -> None:
        self.index, self.job, self.parser = index, job, parser
        self.deltas: list = []
        self.logprobs: list = []
        self.text: list[str] = []
        self.n_calls = 0
        self.result: Any = None


def _family(host: Any, req: GenRequest) -> str:
    fam = chat_template(host.model).output_family
    if fam == "plain" and req.tools:
        arch_fam = family_of(host.model.config.arch)
        fam = arch_fam if arch_fam != "plain" else fam
    return fam


def _constraint(host: Any, req: GenRequest, family: str) -> Any:
    try:
        g = grammar.grammar_for_response_format(req.response_format)
        choice = req.tool_choice
        if req.tools and (choice == "required" or isinstance(choice, dict)):
            if g is not None:
                raise grammar.GrammarError("response_format and a forced tool_choice cannot be combined")
            name = choice["function"]["name"] if isinstance(choice, dict) else None
            g = grammar.grammar_for_tool_call(family, req.tools, name)
        return None if g is None else g
    except grammar.GrammarError as e:
        raise APIError(str(e), param="response_format", code="unsupported_schema") from None


def _params(req: GenRequest, i: int, grammar_src: str | None, host: Any) -> Any:
    s = dict(req.sampling)
    if s.get("seed") is not None:
        s["seed"] = s["seed"] + i
    try:
        base = sampling_params(**s)
        c = grammar.Constraint.create(host.model, grammar_src) if grammar_src else None
    except grammar.GrammarError as e:
        raise APIError(str(e), param="response_format", code="unsupported_schema") from None
    except ValueError as e:
        raise APIError(str(e)) from None
    fields = {f.name: getattr(base, f.name) for f in dataclasses.fields(base)}
    return grammar.ConstrainedParams(**fields, constraint=c)


def prepare(host: Any, req: GenRequest) -> tuple[list[int], str, Any, str | None]:
    """(prompt ids, prompt text, parser factory, grammar) for a request; APIError when invalid."""
    model = host.model
    if req.kind == "chat":
        family = _family(host, req)
        try:
            text, ids = render_chat(model, req.messages, req.tools, **req.template_kwargs)
        except Exception as e:  # noqa: BLE001 - a template error is the request's fault
            raise APIError(f"cannot render the chat template: {e}") from None
        opts: dict[str, Any] = {"tools": req.tools, "prompt": text}
        if "enable_thinking" in req.template_kwargs:
            opts["enable_thinking"] = bool(req.template_kwargs["enable_thinking"])

        def make_parser() -> Any:
            return parser_for(family, **opts)
        return ids, text, make_parser, _constraint(host, req, family)
    if isinstance(req.prompt, list):
        ids = list(req.prompt)
        text = model.detokenize(ids)
    else:
        text, ids = req.prompt, model.tokenize(req.prompt, add_special=True)
    return ids, text, None, _constraint(host, req, "plain")


def start(host: Any, req: GenRequest) -> tuple[list[_Choice], str]:
    """Submit the request's `n` choices; (choices, prompt text). APIError for a bad request."""
    ids, text, make_parser, g = prepare(host, req)
    if len(ids) >= host.engine.n_ctx:
        raise APIError(f"the prompt has {len(ids)} tokens; the context holds {host.engine.n_ctx}",
                       code="context_length_exceeded", param="messages" if req.kind == "chat" else "prompt")
    params = [_params(req, i, g, host) for i in range(req.n)]
    choices = []
    try:
        for i, p in enumerate(params):
            job = host.submit(ids, p, decode_special=req.kind == "chat", cache_prompt=req.cache_prompt)
            choices.append(_Choice(i, job, make_parser() if make_parser else None))
    except ValueError as e:
        for c in choices:
            c.job.cancel()
        raise APIError(str(e)) from None
    return choices, text


async def _merged(choices: list[_Choice]) -> AsyncIterator[tuple[_Choice, Any]]:
    """(choice, event) pairs from all choices as they come."""
    queue: asyncio.Queue = asyncio.Queue()

    async def pump(c: _Choice) -> None:
        async for ev in c.job:
            await queue.put((c, ev))
        await queue.put((c, None))

    tasks = [asyncio.create_task(pump(c)) for c in choices]
    left = len(choices)
    try:
        while left:
            c, ev = await queue.get()
            if ev is None:
                left -= 1
                continue
            yield c, ev
    finally:
        for t in tasks:
            t.cancel()


def _finish_reason(c: _Choice) -> str:
    r = c.result
    if r.finish_reason == "error":
        raise APIError(f"generation failed: {r.error}", status=500, type_="server_error")
    if r.finish_reason == "cancelled":
        raise APIError("generation was cancelled (the server is shutting down or switching models)",
                       status=503, type_="server_error")
    return "tool_calls" if c.n_calls and r.finish_reason == "stop" else r.finish_reason


def _chat_delta(c: _Choice, d: Any) -> dict:
    if d.tool_call is not None:
        call = dict(d.tool_call)
        call["index"] = c.n_calls
        c.n_calls += 1
        return {"tool_calls": [call]}
    if d.reasoning:
        return {"reasoning_content": d.reasoning}
    return {"content": d.content}


def _usage(choices: list[_Choice]) -> dict:
    prompt = choices[0].result.usage.prompt_tokens
    comp = sum(c.result.usage.completion_tokens for c in choices)
    cached = min(c.result.usage.cached_tokens for c in choices)
    return {"prompt_tokens": prompt, "completion_tokens": comp, "total_tokens": prompt + comp,
            "prompt_tokens_details": {"cached_tokens": cached}}


def _detok(host: Any) -> Any:
    tok = host.model.tokenizer
    return lambda t: tok.token_to_piece(int(t), special=True).decode("utf-8", "replace")


async def stream(host: Any, req: GenRequest, choices: list[_Choice], model_name: str,
                 prompt_text: str = "") -> AsyncIterator[dict]:
    """The chunks of a streamed response (the caller writes them as SSE and ends with [DONE])."""
    cid, created = new_id("chatcmpl" if req.kind == "chat" else "cmpl"), now()
    detok = _detok(host)
    try:
        if req.kind == "chat":
            for c in choices:
                yield chat_chunk(cid, created, model_name, [{"index": c.index, "delta": {"role": "assistant",
                                                             "content": ""}, "logprobs": None,
                                                             "finish_reason": None}])
        elif req.echo:
            for c in choices:
                yield completion_chunk(cid, created, model_name, [{"index": c.index, "text": prompt_text,
                                                                   "logprobs": None, "finish_reason": None}])
        async for c, ev in _merged(choices):
            for chunk in _event_chunks(req, c, ev, cid, created, model_name, detok):
                yield chunk
        if req.include_usage:
            usage = _usage(choices)
            maker = chat_chunk if req.kind == "chat" else completion_chunk
            yield maker(cid, created, model_name, [], usage)
    finally:
        for c in choices:
            c.job.cancel()


def _event_chunks(req: GenRequest, c: _Choice, ev: Any, cid: str, created: int, model: str,
                  detok: Any) -> list[dict]:
    out: list[dict] = []
    lp = [ev.logprob] if ev.logprob is not None else []
    if req.kind == "chat":
        deltas = c.parser.feed(ev.text) if ev.text else []
        if ev.kind == "done":
            c.result = ev.result
            deltas += c.parser.finish()
        for i, d in enumerate(deltas):
            logprobs = chat_logprobs(lp, detok) if lp and i == 0 else None
            out.append(chat_chunk(cid, created, model, [{"index": c.index, "delta": _chat_delta(c, d),
                                                         "logprobs": logprobs, "finish_reason": None}]))
        if ev.kind == "done":
            out.append(chat_chunk(cid, created, model, [{"index": c.index, "delta": {}, "logprobs": None,
                                                         "finish_reason": _finish_reason(c)}]))
        return out
    if ev.kind == "done":
        c.result = ev.result
    if ev.text or lp:
        out.append(completion_chunk(cid, created, model, [{"index": c.index, "text": ev.text,
                                                           "logprobs": completion_logprobs(lp, detok) if lp else None,
                                                           "finish_reason": None}]))
    if ev.kind == "done":
        out.append(completion_chunk(cid, created, model, [{"index": c.index, "text": "", "logprobs": None,
                                                           "finish_reason": _finish_reason(c)}]))
    return out


async def complete(host: Any, req: GenRequest, choices: list[_Choice], model_name: str,
                   prompt_text: str = "") -> dict:
    """The whole (non-streamed) response object."""
    try:
        async for c, ev in _merged(choices):
            if ev.kind == "done":
                c.result = ev.result
            elif ev.text:
                c.text.append(ev.text)
    finally:
        for c in choices:
            c.job.cancel()
    detok = _detok(host)
    out = []
    for c in choices:
        r = c.result
        if req.kind == "chat":
            parsed = c.parser.parse(r.text)
            c.n_calls = len(parsed.tool_calls)
            msg = parsed.to_message()
            if msg.get("content") == "" and parsed.tool_calls:
                msg["content"] = None
            out.append({"index": c.index, "message": msg, "finish_reason": _finish_reason(c),
                        "logprobs": chat_logprobs(r.logprobs, detok) if r.logprobs else None})
        else:
            text = (prompt_text if req.echo else "") + r.text
            out.append({"index": c.index, "text": text, "finish_reason": _finish_reason(c),
                        "logprobs": completion_logprobs(r.logprobs, detok) if r.logprobs else None})
    obj = "chat.completion" if req.kind == "chat" else "text_completion"
    return {"id": new_id("chatcmpl" if req.kind == "chat" else "cmpl"), "object": obj, "created": now(),
            "model": model_name, "system_fingerprint": "zinc", "choices": out, "usage": _usage(choices)}


def stats_of(choices: list[_Choice]) -> list[Any]:
    return [c.result.stats for c in choices if c.result is not None]
