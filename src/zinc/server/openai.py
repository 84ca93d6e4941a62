"""OpenAI-compatible request validation and response shapes for /v1/chat/completions and /v1/completions.

`parse_chat(body, limits)` / `parse_completion(body, limits)` turn a decoded JSON body into a
`GenRequest` or raise `APIError` (a 400 with an OpenAI-style body: ``{"error": {"message", "type",
"param", "code"}}``). Unknown fields are ignored; known fields of the wrong type are errors.
The builders (`chat_chunk`, `chat_response`, `completion_response`, ...) produce the JSON objects.
"""

from __future__ import annotations

import math
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

ROLES = ("system", "developer", "user", "assistant", "tool")
EFFORTS = ("none", "minimal", "low", "medium", "high")


class APIError(Exception):
    """An error answered with an OpenAI-style JSON body."""

    def __init__(self, message: str, status: int = 400, param: str | None = None,
                 type_: str = "invalid_request_error", code: str | None = None) -> None:
        super().__init__(message)
        self.message, self.status, self.param, self.type, self.code = message, status, param, type_, code

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


@dataclass(frozen=True)
class Limits:
    """Server-side bounds on a request."""

    max_tokens: int = 4096  # the most a request may ask for (and the default when it gives none)
    max_n: int = 8
    max_stop: int = 8


@dataclass
class GenRequest:
    """A validated generation request (chat or text completion)."""

    kind: str  # "chat" | "completion"
    model: str | None
    stream: bool
    include_usage: bool
    n: int
    sampling: dict[str, Any]  # keywords for zinc.engine.generate.sampling_params
    cache_prompt: bool = True  # start from a finished request's cache of the same prompt prefix (llama.cpp's)
    messages: list[dict] = field(default_factory=list)
    prompt: str | list[int] = ""
    tools: list[dict] | None = None
    tool_choice: Any = "auto"
    response_format: dict | None = None
    template_kwargs: dict[str, Any] = field(default_factory=dict)
    echo: bool = False


def _err(param: str, why: str) -> APIError:
    return APIError(f"'{param}' {why}", param=param, code="invalid_value")


def _num(body: dict, key: str, lo: float | None = None, hi: float | None = None) -> float | None:
    v = body.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise _err(key, f"must be a number, got {type(v).__name__}")
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise _err(key, f"must be between {lo} and {hi}, got {v}")
    return float(v)


def _int(body: dict, key: str, lo: int | None = None, hi: int | None = None) -> int | None:
    v = body.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise _err(key, f"must be an integer, got {type(v).__name__}")
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise _err(key, f"must be between {lo} and {hi}, got {v}")
    return v


def _bool(body: dict, key: str, default: bool = False) -> bool:
    v = body.get(key)
    if v is None:
        return default
    if not isinstance(v, bool):
        raise _err(key, f"must be a boolean, got {type(v).__name__}")
    return v


def _stop(body: dict, limits: Limits) -> list[str]:
    v = body.get("stop")
    if v is None:
        return []
    items = [v] if isinstance(v, str) else v
    if not isinstance(items, list) or not all(isinstance(s, str) and s for s in items):
        raise _err("stop", "must be a non-empty string or a list of them")
    if len(items) > limits.max_stop:
        raise _err("stop", f"may hold at most {limits.max_stop} strings")
    return items


def _logit_bias(body: dict) -> dict[int, float]:
    v = body.get("logit_bias")
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise _err("logit_bias", "must be an object mapping token ids to numbers")
    out = {}
    for k, b in v.items():
        try:
            tok = int(k)
        except (TypeError, ValueError):
            raise _err("logit_bias", f"key {k!r} is not a token id") from None
        if tok < 0 or isinstance(b, bool) or not isinstance(b, (int, float)) or not -100 <= b <= 100:
            raise _err("logit_bias", f"entry {k!r}: a token id >= 0 and a bias in [-100, 100]")
        out[tok] = float(b)
    return out


def _sampling(body: dict, limits: Limits) -> dict[str, Any]:
    """The sampler keywords common to both endpoints (OpenAI defaults: temperature 1, top_p 1)."""
    mt = _int(body, "max_completion_tokens", 1)
    if mt is None:
        mt = _int(body, "max_tokens", 1)
    if mt is not None and mt > limits.max_tokens:
        raise _err("max_tokens", f"must be at most {limits.max_tokens} (this server's limit), got {mt}")
    s: dict[str, Any] = {"max_tokens": mt or limits.max_tokens}
    temp = _num(body, "temperature", 0, 2)
    s["temperature"] = 1.0 if temp is None else temp
    top_p = _num(body, "top_p", 0, 1)
    s["top_p"] = 1.0 if top_p is None else top_p
    top_k = _int(body, "top_k", 0)
    s["top_k"] = top_k or 0
    min_p = _num(body, "min_p", 0, 1)
    s["min_p"] = min_p or 0.0
    for key in ("presence_penalty", "frequency_penalty"):
        v = _num(body, key, -2, 2)
        s[key] = v or 0.0
    rp = _num(body, "repetition_penalty", 0.01, 10) or _num(body, "repeat_penalty", 0.01, 10)
    s["repeat_penalty"] = rp or 1.0
    seed = _int(body, "seed")
    s["seed"] = None if seed is None else seed % (2**63)
    s["stop"] = _stop(body, limits)
    s["logit_bias"] = _logit_bias(body)
    return s


def _text_of(content: Any, where: str) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for p in content:
            if isinstance(p, str):
                parts.append(p)
            elif isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str):
                parts.append(p["text"])
            elif isinstance(p, dict) and p.get("type") in ("image_url", "input_audio", "file", "image"):
                raise APIError(f"{where}: content part type {p['type']!r} is not supported by this model",
                               param=where, code="unsupported_content")
            else:
                raise _err(where, "parts must be {'type': 'text', 'text': ...}")
        return "".join(parts)
    raise _err(where, "must be a string or a list of text parts")


def _message(i: int, m: Any) -> dict:
    where = f"messages[{i}]"
    if not isinstance(m, dict):
        raise _err(where, "must be an object")
    role = m.get("role")
    if role not in ROLES:
        raise _err(f"{where}.role", f"must be one of {', '.join(ROLES)}, got {role!r}")
    out: dict[str, Any] = {"role": "system" if role == "developer" else role,
                           "content": _text_of(m.get("content"), f"{where}.content")}
    if role == "assistant" and m.get("tool_calls") is not None:
        calls = m["tool_calls"]
        if not isinstance(calls, list) or not all(isinstance(c, dict) and isinstance(c.get("function"), dict)
                                                  for c in calls):
            raise _err(f"{where}.tool_calls", "must be a list of {'function': {...}} objects")
        out["tool_calls"] = calls
    if role == "assistant" and isinstance(m.get("reasoning_content"), str):
        out["reasoning_content"] = m["reasoning_content"]
    if role == "tool":
        if m.get("tool_call_id") is not None and not isinstance(m["tool_call_id"], str):
            raise _err(f"{where}.tool_call_id", "must be a string")
        out["tool_call_id"] = m.get("tool_call_id")
        if isinstance(m.get("name"), str):
            out["name"] = m["name"]
    return out


def _tools(body: dict) -> tuple[list[dict] | None, Any]:
    tools = body.get("tools")
    if tools is not None:
        if not isinstance(tools, list) or not all(
                isinstance(t, dict) and t.get("type", "function") == "function"
                and isinstance(t.get("function"), dict) and isinstance(t["function"].get("name"), str)
                for t in tools):
            raise _err("tools", "must be a list of {'type': 'function', 'function': {'name': ...}}")
        tools = [{**t, "type": "function"} for t in tools] or None
    choice = body.get("tool_choice", "auto")
    if isinstance(choice, str):
        if choice not in ("auto", "none", "required"):
            raise _err("tool_choice", "must be 'auto', 'none', 'required' or a function choice")
    elif isinstance(choice, dict):
        fn = choice.get("function")
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise _err("tool_choice", "a function choice is {'type': 'function', 'function': {'name': ...}}")
    else:
        raise _err("tool_choice", "must be a string or an object")
    if choice != "auto" and choice != "none" and not tools:
        raise _err("tool_choice", "needs 'tools'")
    return tools, choice


def _common(body: Any, limits: Limits) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise APIError("the request body must be a JSON object")
    model = body.get("model")
    if model is not None and not isinstance(model, str):
        raise _err("model", "must be a string")
    n = _int(body, "n", 1, limits.max_n) or 1
    so = body.get("stream_options")
    if so is not None and not isinstance(so, dict):
        raise _err("stream_options", "must be an object")
    include_usage = _bool(so or {}, "include_usage")
    return {"model": model, "stream": _bool(body, "stream"), "include_usage": include_usage, "n": n,
            "sampling": _sampling(body, limits), "cache_prompt": _bool(body, "cache_prompt", True)}


def parse_chat(body: Any, limits: Limits) -> GenRequest:
    """Validate a /v1/chat/completions body."""
    c = _common(body, limits)
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        raise _err("messages", "must be a non-empty list")
    messages = [_message(i, m) for i, m in enumerate(msgs)]
    tools, choice = _tools(body)
    if _bool(body, "logprobs"):
        c["sampling"]["logprobs"] = True
        c["sampling"]["top_logprobs"] = _int(body, "top_logprobs", 0, 20) or 0
    elif body.get("top_logprobs") is not None:
        raise _err("top_logprobs", "needs logprobs: true")
    kw = body.get("chat_template_kwargs") or {}
    if not isinstance(kw, dict):
        raise _err("chat_template_kwargs", "must be an object")
    kw = dict(kw)
    if body.get("enable_thinking") is not None:
        kw["enable_thinking"] = _bool(body, "enable_thinking")
    effort = body.get("reasoning_effort")
    if effort is not None:
        if effort not in EFFORTS:
            raise _err("reasoning_effort", f"must be one of {', '.join(EFFORTS)}")
        kw.setdefault("enable_thinking", effort not in ("none", "minimal"))
        kw.setdefault("reasoning_effort", effort)
    rf = body.get("response_format")
    if rf is not None and not isinstance(rf, dict):
        raise _err("response_format", "must be an object")
    return GenRequest("chat", messages=messages, tools=None if choice == "none" else tools, tool_choice=choice,
                      response_format=rf, template_kwargs=kw, **c)


def parse_completion(body: Any, limits: Limits) -> GenRequest:
    """Validate a /v1/completions body."""
    c = _common(body, limits)
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], (str, list)):
        prompt = prompt[0]
    if isinstance(prompt, list):
        if not prompt or not all(isinstance(t, int) and not isinstance(t, bool) for t in prompt):
            raise _err("prompt", "must be a string, or one list of token ids")
    elif not isinstance(prompt, str) or not prompt:
        raise _err("prompt", "must be a non-empty string (batches of prompts are not supported)")
    lp = _int(body, "logprobs", 0, 20)
    if lp is not None:
        c["sampling"]["logprobs"] = True
        c["sampling"]["top_logprobs"] = lp
    rf = body.get("response_format")
    if rf is not None and not isinstance(rf, dict):
        raise _err("response_format", "must be an object")
    return GenRequest("completion", prompt=prompt, echo=_bool(body, "echo"), response_format=rf, **c)


# -- responses ---------------------------------------------------------------------------------------

def new_id(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(12)}"


def now() -> int:
    return int(time.time())


def chat_logprobs(items: list, detok: Any) -> dict:
    """OpenAI chat logprobs: {"content": [{"token", "logprob", "bytes", "top_logprobs": [...]}]}."""
    def entry(tok: int, lp: float) -> dict:
        text = detok(tok)
        return {"token": text, "logprob": float(lp), "bytes": list(text.encode("utf-8"))}

    out = []
    for it in items:
        e = entry(it.token, it.logprob)
        e["top_logprobs"] = [entry(t, lp) for t, lp in (it.top or ())]
        out.append(e)
    return {"content": out}


def completion_logprobs(items: list, detok: Any, offset: int = 0) -> dict:
    """Legacy completions logprobs: tokens, token_logprobs, top_logprobs (dicts), text_offset."""
    tokens, lps, tops, offs = [], [], [], []
    pos = offset
    for it in items:
        text = detok(it.token)
        tokens.append(text)
        lps.append(float(it.logprob))
        tops.append({detok(t): float(lp) for t, lp in (it.top or ())})
        offs.append(pos)
        pos += len(text)
    return {"tokens": tokens, "token_logprobs": lps, "top_logprobs": tops, "text_offset": offs}


def _chunk(obj: str, cid: str, created: int, model: str, choices: list[dict], usage: dict | None) -> dict:
    d = {"id": cid, "object": obj, "created": created, "model": model, "system_fingerprint": "zinc",
         "choices": choices}
    if usage is not None:
        d["usage"] = usage
    return d


def chat_chunk(cid: str, created: int, model: str, choices: list[dict], usage: dict | None = None) -> dict:
    return _chunk("chat.completion.chunk", cid, created, model, choices, usage)


def completion_chunk(cid: str, created: int, model: str, choices: list[dict], usage: dict | None = None) -> dict:
    return _chunk("text_completion", cid, created, model, choices, usage)
