"""Split generated text into reasoning, answer content and tool calls, incrementally.

``parser_for(arch_or_family, **opts)`` returns an :class:`OutputParser` for one reply. ``feed(chunk)``
returns the :class:`Delta` s that are certain so far; text that could be the start of a marker is
held back, so no delta ever contains part of a tag. ``finish()`` flushes the rest. Feeding a text
in any number of pieces gives the same concatenated result as ``parse(text)``.

Formats (the model's side of the chat templates in ``chat_template``):

* ``qwen3`` / ``qwen35`` / ``qwen3-coder``: optional ``<think>…</think>`` at the start (Qwen3.5's
  generation prompt already opens ``<think>``, so its reply starts inside the reasoning; a
  ``<tool_call>`` also ends reasoning); tool calls ``<tool_call>{"name":…, "arguments":…}</tool_call>``
  (Qwen3) or ``<tool_call><function=NAME><parameter=P>\\nV\\n</parameter></function></tool_call>``
  (Qwen3.5, Qwen3-Coder; also a bare ``<function=NAME>`` for a tool in ``tools``). Parameter
  values are strings unless the tool's JSON schema gives a non-string type.
* ``gemma4``: ``<|channel>thought\\n…<channel|>`` reasoning, ``<|tool_call>call:NAME{k:v,…}<tool_call|>``
  calls with ``<|"|>``-quoted strings; other ``<|channel>`` and stray ``<channel|>`` are dropped.
* ``gpt-oss`` (harmony): messages ``[<|start|>assistant]HEADER<|message|>BODY<|end|>`` where the
  header's ``<|channel|>analysis`` is reasoning, ``final``/``commentary`` content, and a recipient
  ``to=functions.NAME`` makes BODY the JSON arguments of a call (ends at ``<|call|>`` or the end).
* ``llama3``: ``<|eot_id|>``/``<|eom_id|>`` dropped; with ``tools``, a reply that is a JSON object
  ``{"name":…, "parameters":…}`` (or starts with ``<|python_tag|>``) becomes a tool call.
* ``plain`` (Gemma 2/3 and unknown architectures): content, with an optional leading
  ``<think>…</think>``.

Qwen, Gemma and plain replies have reasoning and each content stretch stripped of surrounding
whitespace; harmony channel text is kept exactly. End-of-turn tokens found in the text are dropped.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

__all__ = ["Delta", "ParsedOutput", "OutputParser", "parser_for", "parse", "collect",
           "family_of", "FAMILIES"]


@dataclass(frozen=True)
class Delta:
    """One piece of output: reasoning text, content text, or one complete tool call
    ``{"id", "type": "function", "function": {"name", "arguments": JSON string}}``."""

    reasoning: str = ""
    content: str = ""
    tool_call: dict | None = None


@dataclass
class ParsedOutput:
    reasoning_content: str = ""
    content: str = ""
    tool_calls: list[dict] = field(default_factory=list)

    def to_message(self) -> dict:
        """An OpenAI-style assistant message (``reasoning_content``/``tool_calls`` only if any)."""
        msg: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.reasoning_content:
            msg["reasoning_content"] = self.reasoning_content
        if self.tool_calls:
            msg["tool_calls"] = self.tool_calls
        return msg


def collect(deltas: Iterable[Delta]) -> ParsedOutput:
    """Concatenate deltas into one :class:`ParsedOutput`."""
    out = ParsedOutput()
    reasoning, content = [], []
    for d in deltas:
        reasoning.append(d.reasoning)
        content.append(d.content)
        if d.tool_call is not None:
            out.tool_calls.append(d.tool_call)
    out.reasoning_content, out.content = "".join(reasoning), "".join(content)
    return out


# -- scanning -------------------------------------------------------------------------------------

def _scan(buf: str, markers: tuple[str, ...], maxlen: int, final: bool) -> tuple[int, str | None]:
    """Leftmost-longest marker in ``buf``: ``(pos, marker)``; or ``(pos, None)`` when ``buf[:pos]``
    is plain text and ``buf[pos:]`` must wait (it could still become a marker; never when final)."""
    best, best_m = -1, None
    for m in markers:
        i = buf.find(m)
        if i != -1 and (best == -1 or i < best or (i == best and len(m) > len(best_m))):
            best, best_m = i, m
    if not final:
        n = len(buf)
        last = best if best != -1 else n - 1
        for j in range(max(0, n - maxlen + 1), min(last, n - 1) + 1):
            tail = buf[j:]
            if any(len(m) > len(tail) and m.startswith(tail) for m in markers):
                return j, None
    if best == -1:
        return len(buf), None
    return best, best_m


class _Section:
    """A stretch of one channel; with ``strip``, surrounding whitespace is dropped as it streams."""

    def __init__(self, channel: str, strip: bool) -> None:
        self.channel, self.strip = channel, strip
        self.started = False
        self.pending = ""

    def write(self, text: str, emit: Callable[[str, str], None]) -> None:
        if not text:
            return
        if not self.strip:
            self.started = True
            emit(self.channel, text)
            return
        if not self.started:
            text = text.lstrip()
            if not text:
                return
            self.started = True
        core = text.rstrip()
        if core:
            emit(self.channel, self.pending + core)
            self.pending = text[len(core):]
        else:
            self.pending += text


# -- the parser base ------------------------------------------------------------------------------

class OutputParser:
    """Incremental parser of one generated reply. Subclasses define the markers and the states."""

    family = "plain"
    MARKERS: tuple[str, ...] = ("<think>", "</think>")
    STRIP = True
    DEFAULT_START_IN_REASONING = False

    def __init__(self, *, tools: list[dict] | None = None, prompt: str | None = None,
                 start_in_reasoning: bool | None = None, enable_thinking: bool | None = None,
                 id_prefix: str | None = None) -> None:
        self.tools = list(tools or [])
        if id_prefix is None:
            id_prefix = f"call_{secrets.token_hex(4)}_"
        self._init = dict(tools=tools, prompt=prompt, start_in_reasoning=start_in_reasoning,
                          enable_thinking=enable_thinking, id_prefix=id_prefix)
        self._id_prefix = id_prefix
        self._n_calls = 0
        self._buf = ""
        self._out: list[Delta] = []
        self._section: _Section | None = None
        self._finished = False
        self._seen = False  # anything but whitespace produced yet
        self.markers = tuple(self._markers())
        self._maxlen = max((len(m) for m in self.markers), default=1)
        if start_in_reasoning is None:
            start_in_reasoning = self._prompt_starts_reasoning(prompt)
        if start_in_reasoning is None and enable_thinking is not None:
            start_in_reasoning = bool(enable_thinking) and self.DEFAULT_START_IN_REASONING
        if start_in_reasoning is None:
            start_in_reasoning = self.DEFAULT_START_IN_REASONING
        self.state = "content"
        self._start(bool(start_in_reasoning))

    # hooks for subclasses
    def _markers(self) -> Iterable[str]:
        return self.MARKERS

    def _prompt_starts_reasoning(self, prompt: str | None) -> bool | None:
        return _opens_after(prompt, "<think>", ("</think>",))

    def _start(self, in_reasoning: bool) -> None:
        if in_reasoning:
            self.state = "reasoning"
            self._open("reasoning")

    def _text(self, text: str) -> None:
        self._write(text, self.state)

    def _marker(self, m: str) -> None:
        if not self._think_marker(m):
            self._literal(m)

    def _end(self) -> None:
        pass

    # public API
    def feed(self, chunk: str) -> list[Delta]:
        """Consume ``chunk``; return the deltas that are now certain."""
        if self._finished:
            raise RuntimeError("feed() after finish()")
        self._buf += chunk
        self._run(final=False)
        return self._take()

    def finish(self) -> list[Delta]:
        """End of the reply: flush held-back text and any unterminated block."""
        if not self._finished:
            self._run(final=True)
            self._end()
            self._section = None
            self._finished = True
        return self._take()

    def parse(self, text: str) -> ParsedOutput:
        """One-shot parse of a whole reply with a fresh parser of the same settings."""
        p = type(self)(**self._init)
        return collect(p.feed(text) + p.finish())

    # machinery
    def _run(self, final: bool) -> None:
        while True:
            pos, m = _scan(self._buf, self.markers, self._maxlen, final)
            text, self._buf = self._buf[:pos], self._buf[pos:]
            if text:
                self._text(text)
            if m is None:
                return
            self._buf = self._buf[len(m):]
            self._marker(m)

    def _take(self) -> list[Delta]:
        out, self._out = self._out, []
        return out

    def _emit(self, channel: str, text: str) -> None:
        if not text:
            return
        self._seen = True
        last = self._out[-1] if self._out else None
        if channel == "reasoning":
            if last is not None and last.tool_call is None and not last.content:
                self._out[-1] = Delta(reasoning=last.reasoning + text)
            else:
                self._out.append(Delta(reasoning=text))
        else:
            if last is not None and last.tool_call is None and not last.reasoning:
                self._out[-1] = Delta(content=last.content + text)
            else:
                self._out.append(Delta(content=text))

    def _open(self, channel: str, strip: bool | None = None) -> None:
        self._section = _Section(channel, self.STRIP if strip is None else strip)

    def _close(self) -> None:
        self._section = None

    def _write(self, text: str, channel: str = "content") -> None:
        if self._section is None or self._section.channel != channel:
            self._open(channel)
        self._section.write(text, self._emit)

    def _call(self, name: str, arguments: Any) -> None:
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        call = {"id": f"{self._id_prefix}{self._n_calls}", "type": "function",
                "function": {"name": name, "arguments": arguments}}
        self._n_calls += 1
        self._seen = True
        self._close()
        self._out.append(Delta(tool_call=call))

    def _think_marker(self, m: str) -> bool:
        """``<think>``/``</think>`` handling shared by the tag formats; False if ``m`` is not one."""
        if m == "<think>":
            if self.state == "content" and not self._seen:
                self.state = "reasoning"
                self._open("reasoning")
            elif not (self.state == "reasoning" and not self._section_started()):
                self._literal(m)
            return True
        if m == "</think>":
            if self.state == "reasoning":
                self.state = "content"
                self._seen = True
                self._open("content")
            else:
                self._literal(m)
            return True
        return False

    def _section_started(self) -> bool:
        return self._section is not None and self._section.started

    def _literal(self, m: str) -> None:
        self._write(m, "reasoning" if self.state == "reasoning" else "content")


def _opens_after(prompt: str | None, opener: str, closers: tuple[str, ...]) -> bool | None:
    """True if the prompt's last ``opener`` is not closed (the reply continues inside it);
    None when there is no prompt."""
    if prompt is None:
        return None
    i = prompt.rfind(opener)
    return i != -1 and all(prompt.rfind(c) < i for c in closers)


# -- Qwen -----------------------------------------------------------------------------------------

_QWEN_EOG = ("<|im_end|>", "<|endoftext|>")


class QwenParser(OutputParser):
    family = "qwen3"
    MARKERS = ("<think>", "</think>", "<tool_call>", "</tool_call>") + _QWEN_EOG

    def _markers(self) -> Iterable[str]:
        names = _tool_names(self.tools)
        extra = tuple(f"<function={n}>" for n in names) + (("</function>",) if names else ())
        return self.MARKERS + extra

    def _prompt_starts_reasoning(self, prompt: str | None) -> bool | None:
        return _opens_after(prompt, "<think>", ("</think>", "<|im_end|>"))

    def _text(self, text: str) -> None:
        if self.state in ("tool", "func"):
            self._body += text
        else:
            self._write(text, self.state)

    def _marker(self, m: str) -> None:
        if self.state in ("tool", "func"):
            self._body += m
            if (self.state == "tool" and m == "</tool_call>") or \
                    (self.state == "func" and m == "</function>"):
                self._end_call()
            return
        if self._think_marker(m):
            return
        if m == "<tool_call>":
            self.state, self._body = "tool", m
            self._close()
        elif m.startswith("<function=") and self.state == "content":
            self.state, self._body = "func", m
            self._close()
        elif m in _QWEN_EOG or m == "</tool_call>":
            pass
        else:
            self._literal(m)

    def _end_call(self) -> None:
        body, self._body = self._body, ""
        self.state = "content"
        calls = _parse_qwen_call(body, self.tools)
        if calls is None:
            self._write(body, "content")
        else:
            for name, args in calls:
                self._call(name, args)
        self._open("content")

    def _end(self) -> None:
        if self.state in ("tool", "func"):
            self._end_call()


class Qwen35Parser(QwenParser):
    family = "qwen35"
    DEFAULT_START_IN_REASONING = True


class Qwen3CoderParser(QwenParser):
    family = "qwen3-coder"


def _tool_names(tools: list[dict]) -> list[str]:
    names = []
    for t in tools:
        fn = t.get("function", t) if isinstance(t, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str) and fn["name"]:
            names.append(fn["name"])
    return names


def _tool_schema(tools: list[dict], name: str) -> dict:
    for t in tools:
        fn = t.get("function", t) if isinstance(t, dict) else None
        if isinstance(fn, dict) and fn.get("name") == name:
            params = fn.get("parameters")
            props = params.get("properties") if isinstance(params, dict) else None
            return props if isinstance(props, dict) else {}
    return {}


_FUNC_RE = re.compile(r"<function=([^>\n]+)>(.*?)(?:</function>|$)", re.S)
_PARAM_RE = re.compile(r"<parameter=([^>\n]+)>(.*?)(?:</parameter>|(?=<parameter=)|$)", re.S)


def _parse_qwen_call(body: str, tools: list[dict]) -> list[tuple[str, Any]] | None:
    """Calls in one ``<tool_call>`` block (XML or JSON form) or a bare ``<function=…>`` block."""
    s = body.removeprefix("<tool_call>").removesuffix("</tool_call>").strip()
    if s.startswith("<function="):
        calls = []
        for fm in _FUNC_RE.finditer(s):
            name = fm.group(1).strip()
            schema = _tool_schema(tools, name)
            args = {}
            for pm in _PARAM_RE.finditer(fm.group(2)):
                value = pm.group(2).removeprefix("\n").removesuffix("\n")
                key = pm.group(1).strip()
                args[key] = _typed_value(value, schema.get(key))
            calls.append((name, args))
        return calls or None
    if s.startswith("{"):
        try:
            obj = json.loads(s)
        except ValueError:
            return None
        if isinstance(obj, dict) and isinstance(obj.get("name"), str):
            args = obj.get("arguments", obj.get("parameters", {}))
            return [(obj["name"], args)]
    return None


_JSON_TYPES = {"integer": int, "number": (int, float), "boolean": bool, "object": dict,
               "array": list, "null": type(None)}


def _typed_value(value: str, schema: Any) -> Any:
    """A parameter value as its schema type says (a string when unknown or string-typed)."""
    types = schema.get("type") if isinstance(schema, dict) else None
    if types is None:
        return value
    types = [types] if isinstance(types, str) else list(types)
    if types == ["string"]:
        return value
    try:
        parsed = json.loads(value)
    except ValueError:
        return value
    for t in types:
        py = _JSON_TYPES.get(t)
        if py is not None and isinstance(parsed, py) and not (t != "boolean" and isinstance(parsed, bool)):
            return parsed
    return value


# -- Gemma 4 --------------------------------------------------------------------------------------

_GEMMA_EOG = ("<turn|>", "<|tool_response>", "<eos>")


class Gemma4Parser(OutputParser):
    family = "gemma4"
    MARKERS = ("<|channel>thought", "<|channel>", "<channel|>", "<|tool_call>", "<tool_call|>",
               "<|turn>model\n") + _GEMMA_EOG

    def _prompt_starts_reasoning(self, prompt: str | None) -> bool | None:
        return _opens_after(prompt, "<|channel>thought", ("<channel|>", "<turn|>"))

    def _text(self, text: str) -> None:
        if self.state == "tool":
            self._body += text
        else:
            self._write(text, self.state)

    def _marker(self, m: str) -> None:
        if self.state == "tool":
            if m == "<tool_call|>":
                self._end_call()
            else:
                self._body += m
            return
        if m == "<|tool_call>":
            self.state, self._body = "tool", ""
            self._close()
        elif m == "<|channel>thought":
            if self.state == "content":
                self.state = "reasoning"
                self._open("reasoning")
            else:
                self._literal(m)
        elif m == "<channel|>":
            if self.state == "reasoning":
                self.state = "content"
                self._seen = True
                self._open("content")
        elif m == "<|turn>model\n" and self._seen:
            self._literal(m)
        # <|channel> (another channel), <|turn>model at the start and end-of-turn tokens: dropped

    def _end_call(self) -> None:
        body, self._body = self._body, ""
        self.state = "content"
        call = _parse_gemma_call(body)
        if call is None:
            self._write("<|tool_call>" + body + "<tool_call|>", "content")
        else:
            self._call(*call)
        self._open("content")

    def _end(self) -> None:
        if self.state == "tool":
            body, self._body = self._body, ""
            call = _parse_gemma_call(body)
            if call is None:
                self._write("<|tool_call>" + body, "content")
            else:
                self._call(*call)


_GQ = '<|"|>'


def _parse_gemma_call(body: str) -> tuple[str, Any] | None:
    s = body.strip()
    if not s.startswith("call:") or "{" not in s:
        return None
    brace = s.index("{")
    name = s[5:brace].strip()
    try:
        args, end = _gemma_value(s, brace)
    except (ValueError, IndexError):
        return None
    if not name or not isinstance(args, dict) or s[end:].strip():
        return None
    return name, args


def _gemma_value(s: str, i: int) -> tuple[Any, int]:
    """Parse one Gemma 4 value (``<|"|>str<|"|>``, ``{k:v}``, ``[v]``, number, bool, null)."""
    while s[i].isspace():
        i += 1
    if s.startswith(_GQ, i):
        j = s.index(_GQ, i + len(_GQ))
        return s[i + len(_GQ):j], j + len(_GQ)
    if s[i] in "{[":
        close = "}" if s[i] == "{" else "]"
        out: Any = {} if close == "}" else []
        i += 1
        while True:
            while s[i].isspace():
                i += 1
            if s[i] == close:
                return out, i + 1
            if close == "}":
                if s.startswith(_GQ, i):
                    key, i = _gemma_value(s, i)
                else:
                    j = s.index(":", i)
                    key, i = s[i:j].strip(), j
                while s[i].isspace():
                    i += 1
                if s[i] != ":":
                    raise ValueError("expected ':'")
                out[key], i = _gemma_value(s, i + 1)
            else:
                item, i = _gemma_value(s, i)
                out.append(item)
            while s[i].isspace():
                i += 1
            if s[i] == ",":
                i += 1
            elif s[i] != close:
                raise ValueError("expected ',' or a closing bracket")
    m = re.compile(r"[^,}\]]*").match(s, i)
    token = m.group(0).strip()
    if not token:
        raise ValueError("empty value")
    try:
        return json.loads(token), m.end()
    except ValueError:
        return token, m.end()


# -- harmony (GPT-OSS) ----------------------------------------------------------------------------

HEADER_LIMIT = 512  # a "header" longer than this without <|message|> is plain text


class HarmonyParser(OutputParser):
    family = "gpt-oss"
    MARKERS = ("<|start|>", "<|message|>", "<|end|>", "<|call|>", "<|return|>", "<|endoftext|>")
    STRIP = False

    def _prompt_starts_reasoning(self, prompt: str | None) -> bool | None:
        return None

    def _start(self, in_reasoning: bool) -> None:
        prompt = self._init.get("prompt")
        self._header = ""   # header text written by the model
        self._hprefix = ""  # header text already in the prompt (e.g. "assistant")
        self.state = "header"
        if in_reasoning:
            self._route("<|channel|>analysis")
        elif prompt is not None and "<|start|>" in prompt:
            tail = prompt[prompt.rfind("<|start|>") + len("<|start|>"):]
            if "<|message|>" in tail:
                self._route(tail[:tail.index("<|message|>")])
            elif not any(t in tail for t in ("<|end|>", "<|call|>", "<|return|>")):
                self._hprefix = tail

    def _route(self, header: str) -> None:
        channel = re.search(r"<\|channel\|>\s*([^\s<]+)", header)
        recipient = re.search(r"\bto=([^\s<]+)", header)
        self._header = self._hprefix = ""
        if recipient and recipient.group(1) not in ("assistant", "user"):
            self.state, self._body = "tool", ""
            self._recipient = recipient.group(1)
        elif channel and channel.group(1) == "analysis":
            self.state = "reasoning"
            self._open("reasoning")
        else:
            self.state = "content"
            self._open("content")

    def _text(self, text: str) -> None:
        if self.state == "header":
            self._header += text
            if len(self._header) > HEADER_LIMIT:
                header, self._header, self._hprefix = self._header, "", ""
                self.state = "content"
                self._open("content")
                self._write(header)
        elif self.state == "tool":
            self._body += text
        elif self.state == "between":
            self._write(text)
        else:
            self._write(text, self.state)

    def _marker(self, m: str) -> None:
        if m == "<|endoftext|>":
            return
        if self.state == "header":
            if m == "<|message|>":
                self._route(self._hprefix + self._header)
            else:
                self._header = self._hprefix = ""
                if m != "<|start|>":
                    self.state = "between"
                    self._open("content", strip=True)
            return
        if m == "<|start|>":
            self._end_message()
            self.state, self._header, self._hprefix = "header", "", ""
        elif m in ("<|end|>", "<|call|>", "<|return|>") and self.state != "between":
            self._end_message()
            self.state = "between"
            self._open("content", strip=True)
        elif self.state == "tool":
            self._body += m
        elif self.state != "between" or m == "<|message|>":
            self._literal(m)

    def _literal(self, m: str) -> None:
        if self.state == "between":
            self._write(m)
        else:
            self._write(m, "reasoning" if self.state == "reasoning" else "content")

    def _end_message(self) -> None:
        if self.state == "tool":
            name = self._recipient.removeprefix("functions.")
            self._call(name, self._body.strip())
            self._body = ""
        self._close()

    def _end(self) -> None:
        if self.state == "header" and self._header:
            header, self._header = self._header, ""
            if "<|channel|>" not in header and "to=" not in header:
                self._open("content")
                self._write(header)
        elif self.state == "tool":
            self._end_message()


# -- Llama 3 --------------------------------------------------------------------------------------

class Llama3Parser(OutputParser):
    family = "llama3"
    MARKERS = ("<think>", "</think>", "<|python_tag|>", "<|eot_id|>", "<|eom_id|>")

    def _text(self, text: str) -> None:
        if self.state in ("json", "python"):
            self._body += text
            return
        if self.state == "content" and self.tools and not self._seen:
            lead = text.lstrip()
            if not lead:
                return
            if lead.startswith("{"):
                self.state, self._body = "json", lead
                return
        self._write(text, self.state)

    def _marker(self, m: str) -> None:
        if m in ("<|eot_id|>", "<|eom_id|>"):
            return
        if self.state in ("json", "python"):
            self._body += m
        elif m == "<|python_tag|>" and self.tools and self.state == "content":
            self.state, self._body = "python", ""
            self._close()
        elif not self._think_marker(m):
            self._literal(m)

    def _end(self) -> None:
        if self.state not in ("json", "python"):
            return
        body, state = self._body, self.state
        calls = _parse_llama_calls(body)
        if calls is None:
            self.state = "content"
            self._write(("<|python_tag|>" if state == "python" else "") + body, "content")
        else:
            for name, args in calls:
                self._call(name, args)


_BUILTIN_RE = re.compile(r"^\s*([A-Za-z_][\w.]*)\.call\((.*)\)\s*$", re.S)
_KWARG_RE = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')


def _parse_llama_calls(body: str) -> list[tuple[str, Any]] | None:
    """JSON call objects (one, or several separated by ``;``) or ``name.call(k="v")``."""
    m = _BUILTIN_RE.match(body)
    if m:
        return [(m.group(1), dict(_KWARG_RE.findall(m.group(2))))]
    dec, i, calls, s = json.JSONDecoder(), 0, [], body.strip()
    while i < len(s):
        try:
            obj, i = dec.raw_decode(s, i)
        except ValueError:
            return None
        if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
            return None
        calls.append((obj["name"], obj.get("parameters", obj.get("arguments", {}))))
        while i < len(s) and (s[i].isspace() or s[i] == ";"):
            i += 1
    return calls or None


# -- selection ------------------------------------------------------------------------------------

FAMILIES: dict[str, type[OutputParser]] = {
    "qwen3": QwenParser, "qwen35": Qwen35Parser, "qwen3-coder": Qwen3CoderParser,
    "gemma4": Gemma4Parser, "gpt-oss": HarmonyParser, "llama3": Llama3Parser,
    "plain": OutputParser,
}

_ALIASES = {
    "qwen2": "qwen3", "qwen3moe": "qwen3", "chatml": "qwen3",
    "qwen35moe": "qwen35", "qwen3.5": "qwen35", "qwen3coder": "qwen3-coder",
    "gpt_oss": "gpt-oss", "harmony": "gpt-oss",
    "llama": "llama3",
    "gemma": "plain", "gemma2": "plain", "gemma3": "plain",
}


def family_of(arch_or_family: str) -> str:
    """The parser family for a GGUF architecture or family name (unknown names: ``plain``)."""
    key = (arch_or_family or "").lower()
    return key if key in FAMILIES else _ALIASES.get(key, "plain")


def parser_for(arch_or_family: str, **opts: Any) -> OutputParser:
    """A fresh parser for one reply.

    Options: ``tools`` (the request's tools: enables bare-call detection and typed parameters),
    ``prompt`` (the rendered prompt: tells whether the reply starts inside reasoning, e.g. after
    Qwen3.5's ``<think>\\n``), ``start_in_reasoning`` (force that), ``enable_thinking`` (False: the
    reply starts as content), ``id_prefix`` (tool-call ids are ``id_prefix + index``; default a
    random ``call_xxxxxxxx_``).
    """
    return FAMILIES[family_of(arch_or_family)](**opts)


def parse(text: str, arch_or_family: str = "plain", **opts: Any) -> ParsedOutput:
    """One-shot parse of a whole reply (see :func:`parser_for` for the options)."""
    p = parser_for(arch_or_family, **opts)
    return collect(p.feed(text) + p.finish())
