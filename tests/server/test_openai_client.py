"""The OpenAI-compatible API through the official `openai` client against a live loopback server:
chat and completions, streaming and not, usage in the stream, cached prompt tokens, stop, seeds, n, logprobs,
tool calls forced by a grammar (streamed and not), json_schema output that parses and validates, errors."""

from __future__ import annotations

import json

import pytest

openai = pytest.importorskip("openai")

MSG = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Say hi"}]
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "enum": ["Paris", "Oslo"]},
                                                    "days": {"type": "integer", "minimum": 1, "maximum": 7}},
                   "required": ["city", "days"]}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {
        "type": "object", "properties": {"tz": {"type": "string", "enum": ["UTC", "CET"]}}, "required": ["tz"]}}}]
PERSON = {"type": "object", "properties": {
    "name": {"type": "string", "maxLength": 12}, "age": {"type": "integer", "minimum": 0, "maximum": 130},
    "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 3},
    "ok": {"type": "boolean"}}, "required": ["name", "age", "ok"], "additionalProperties": False}


def test_chat_basic(client, no_eos):
    r = client.chat.completions.create(model="anything", messages=MSG, max_tokens=8, logit_bias=no_eos)
    ch = r.choices[0]
    assert r.object == "chat.completion" and r.model == "qwen3-tiny"
    assert ch.message.role == "assistant" and isinstance(ch.message.content, str)
    assert ch.finish_reason == "length"
    assert r.usage.completion_tokens == 8 and r.usage.prompt_tokens > 5
    assert r.usage.total_tokens == r.usage.prompt_tokens + 8


def test_chat_content_parts_and_roles(client):
    msgs = [{"role": "developer", "content": [{"type": "text", "text": "Be "}, {"type": "text", "text": "brief"}]},
            {"role": "user", "content": "What is 2+2?"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
                "name": "get_time", "arguments": "{\"tz\": \"UTC\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "12:00"}]
    r = client.chat.completions.create(model="m", messages=msgs, max_completion_tokens=4)
    assert r.choices[0].finish_reason in ("stop", "length") and r.usage.completion_tokens <= 4


def test_chat_stream_with_usage(client, no_eos):
    chunks = list(client.chat.completions.create(model="m", messages=MSG, max_tokens=6, stream=True,
                                                 logit_bias=no_eos, stream_options={"include_usage": True}))
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 6
    assert [c.choices[0].finish_reason for c in chunks[:-1]][-1] == "length"
    text = "".join(c.choices[0].delta.content or "" for c in chunks[:-1])
    again = client.chat.completions.create(model="m", messages=MSG, max_tokens=6, temperature=0, logit_bias=no_eos)
    greedy = "".join(c.choices[0].delta.content or "" for c in client.chat.completions.create(
        model="m", messages=MSG, max_tokens=6, temperature=0, stream=True, logit_bias=no_eos) if c.choices)
    assert greedy == again.choices[0].message.content and isinstance(text, str)


def test_seed_reproducible_and_n(client, no_eos):
    kw = dict(model="m", messages=MSG, max_tokens=12, temperature=1.0, logit_bias=no_eos)
    a = client.chat.completions.create(seed=1234, **kw).choices[0].message.content
    b = client.chat.completions.create(seed=1234, **kw).choices[0].message.content
    assert a == b
    r = client.chat.completions.create(seed=1234, n=2, **kw)
    assert [c.index for c in r.choices] == [0, 1]
    assert r.choices[0].message.content == a  # choice i uses seed + i
    assert r.choices[1].message.content != a
    assert r.usage.completion_tokens == 24


def test_stream_n2(client, no_eos):
    seen = {0: "", 1: ""}
    finish = {}
    for c in client.chat.completions.create(model="m", messages=MSG, max_tokens=5, n=2, stream=True, seed=7,
                                            logit_bias=no_eos):
        for ch in c.choices:
            seen[ch.index] += ch.delta.content or ""
            if ch.finish_reason:
                finish[ch.index] = ch.finish_reason
    assert finish == {0: "length", 1: "length"}


def test_logprobs(client, no_eos):
    r = client.chat.completions.create(model="m", messages=MSG, max_tokens=5, logprobs=True, top_logprobs=3,
                                       logit_bias=no_eos, temperature=0)
    lp = r.choices[0].logprobs.content
    assert len(lp) == 5
    for e in lp:
        assert e.logprob <= 0 and len(e.top_logprobs) == 3
        assert e.top_logprobs[0].logprob >= e.logprob - 1e-6  # greedy picks the best (raw) token
    c = client.completions.create(model="m", prompt="Hello", max_tokens=4, logprobs=2, logit_bias=no_eos)
    assert len(c.choices[0].logprobs.tokens) == 4 and len(c.choices[0].logprobs.top_logprobs[0]) == 2


def test_completions(client, no_eos):
    r = client.completions.create(model="m", prompt="Once upon a time", max_tokens=7, logit_bias=no_eos)
    assert r.object == "text_completion" and r.choices[0].finish_reason == "length"
    assert r.usage.completion_tokens == 7
    e = client.completions.create(model="m", prompt="Once", max_tokens=2, echo=True, temperature=0)
    assert e.choices[0].text.startswith("Once")
    parts = list(client.completions.create(model="m", prompt="Once", max_tokens=5, stream=True, logit_bias=no_eos,
                                           stream_options={"include_usage": True}))
    assert parts[-1].usage.completion_tokens == 5
    assert [p.choices[0].finish_reason for p in parts if p.choices][-1] == "length"


def test_stop_string(client):
    fmt = {"type": "json_schema", "json_schema": {"name": "s", "schema": {"const": "hello world"}}}
    r = client.chat.completions.create(model="m", messages=MSG, max_tokens=20, response_format=fmt)
    assert r.choices[0].message.content == '"hello world"'
    r = client.chat.completions.create(model="m", messages=MSG, max_tokens=20, response_format=fmt, stop=["wor"])
    assert r.choices[0].message.content == '"hello' and r.choices[0].finish_reason == "stop"


def _check_person(obj: dict) -> None:
    assert set(obj) <= set(PERSON["properties"]) and {"name", "age", "ok"} <= set(obj)
    assert isinstance(obj["name"], str) and len(obj["name"]) <= 12
    assert isinstance(obj["age"], int) and 0 <= obj["age"] <= 130 and isinstance(obj["ok"], bool)
    assert all(t in ("a", "b") for t in obj.get("tags", []))


def test_json_schema_always_valid(client):
    fmt = {"type": "json_schema", "json_schema": {"name": "person", "schema": PERSON, "strict": True}}
    for seed in range(6):
        r = client.chat.completions.create(model="m", messages=MSG, max_tokens=200, temperature=1.2, seed=seed,
                                           response_format=fmt)
        assert r.choices[0].finish_reason == "stop"
        _check_person(json.loads(r.choices[0].message.content))
    text = "".join(c.choices[0].delta.content or "" for c in client.chat.completions.create(
        model="m", messages=MSG, max_tokens=200, seed=99, response_format=fmt, stream=True) if c.choices)
    _check_person(json.loads(text))
    r = client.chat.completions.create(model="m", messages=MSG, max_tokens=200, seed=3,
                                       response_format={"type": "json_object"})
    assert isinstance(json.loads(r.choices[0].message.content), dict)


def test_unsupported_schema_is_400(client):
    bad = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"$ref": "#/definitions/missing"}}}
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model="m", messages=MSG, response_format=bad)
    assert e.value.body["code"] == "unsupported_schema"
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="m", messages=MSG, response_format={"type": "xml"})


def test_tool_calls(client):
    r = client.chat.completions.create(model="m", messages=MSG, tools=TOOLS, tool_choice="required",
                                       max_tokens=100, seed=5)
    ch = r.choices[0]
    assert ch.finish_reason == "tool_calls" and ch.message.tool_calls
    call = ch.message.tool_calls[0]
    assert call.type == "function" and call.id and call.function.name in ("get_weather", "get_time")
    json.loads(call.function.arguments)
    r = client.chat.completions.create(model="m", messages=MSG, tools=TOOLS, max_tokens=100, seed=5,
                                       tool_choice={"type": "function", "function": {"name": "get_weather"}})
    call = r.choices[0].message.tool_calls[0]
    args = json.loads(call.function.arguments)
    assert call.function.name == "get_weather" and args["city"] in ("Paris", "Oslo") and 1 <= args["days"] <= 7


def test_tool_calls_streamed(client):
    calls, finish = [], None
    for c in client.chat.completions.create(model="m", messages=MSG, tools=TOOLS, max_tokens=100, stream=True,
                                            tool_choice={"type": "function", "function": {"name": "get_time"}}):
        if c.choices:
            calls += c.choices[0].delta.tool_calls or []
            finish = c.choices[0].finish_reason or finish
    assert finish == "tool_calls" and len(calls) == 1
    assert calls[0].index == 0 and calls[0].function.name == "get_time"
    assert json.loads(calls[0].function.arguments)["tz"] in ("UTC", "CET")


@pytest.mark.parametrize("kw", [
    {"messages": "hello"}, {"messages": []}, {"messages": [{"role": "wizard", "content": "x"}]},
    {"temperature": "hot"}, {"max_tokens": -1}, {"max_tokens": 10**7}, {"n": 0}, {"stop": 5},
    {"logit_bias": {"abc": 1}}, {"tools": [{"type": "function"}]}, {"tool_choice": "required"},
    {"top_p": 3}, {"stream": "yes"}])
def test_bad_requests(client, kw):
    args = {"model": "m", "messages": MSG, **kw}
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(**args)
    assert e.value.status_code == 400 and e.value.body["message"] and e.value.body["type"] == "invalid_request_error"


def test_prompt_cache_in_usage(client, no_eos):
    """A follow-up turn starts from the cache of the turn before (`usage.prompt_tokens_details.cached_tokens`);
    `cache_prompt: false` (llama.cpp's field) computes the whole prompt, with the same greedy reply."""
    kw = dict(model="m", max_tokens=6, temperature=0, logit_bias=no_eos)
    first = client.chat.completions.create(messages=MSG, **kw)
    turn = MSG + [{"role": "assistant", "content": first.choices[0].message.content},
                  {"role": "user", "content": "And again, in other words"}]
    a = client.chat.completions.create(messages=turn, **kw)
    assert 0 < a.usage.prompt_tokens_details.cached_tokens < a.usage.prompt_tokens
    b = client.chat.completions.create(messages=turn, extra_body={"cache_prompt": False}, **kw)
    assert b.usage.prompt_tokens_details.cached_tokens == 0
    c = client.chat.completions.create(messages=turn, **kw)
    assert c.usage.prompt_tokens_details.cached_tokens == c.usage.prompt_tokens - 1
    assert a.choices[0].message.content == b.choices[0].message.content == c.choices[0].message.content
    with pytest.raises(openai.BadRequestError, match="cache_prompt"):
        client.chat.completions.create(messages=MSG, extra_body={"cache_prompt": "yes"}, **kw)


def test_unknown_fields_ignored(client):
    r = client.chat.completions.create(model="m", messages=MSG, max_tokens=2,
                                       extra_body={"frobnicate": True, "mirostat": 2, "top_k": 5, "min_p": 0.1,
                                                   "repetition_penalty": 1.1, "chat_template_kwargs": {"x": 1},
                                                   "reasoning_effort": "low"},
                                       presence_penalty=0.5, frequency_penalty=0.5)
    assert r.choices[0].message.role == "assistant"
