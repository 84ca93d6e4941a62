"""Chat templates: render a GGUF's Jinja ``tokenizer.chat_template`` safely, as HF transformers does.

Rendering matches ``transformers`` (``ImmutableSandboxedEnvironment`` with ``trim_blocks`` and
``lstrip_blocks``, the ``loopcontrols`` extension, a ``{% generation %}`` tag, the ``tojson`` filter
with ``ensure_ascii=False``, ``raise_exception`` and ``strftime_now``), so a template renders the
same text here as in HF for the same inputs. Context variables: ``messages``, ``tools`` (None when
absent), ``add_generation_prompt``, ``bos_token``, ``eos_token``, ``date_string`` (today as
``"%d %b %Y"`` unless given, as llama.cpp does) and any keyword argument (``enable_thinking``,
``reasoning_effort``, ...; None-valued ones are left undefined) or ``chat_template_kwargs`` entry.

Before rendering, messages get the input fixes llama.cpp applies (``common/chat.cpp``), each only
where the template needs it (found by rendering small probe conversations once):

* a None or missing ``content`` becomes ``""``;
* ``content`` given as a list of ``{"type": "text", "text": ...}`` parts is joined with newlines for
  templates that only handle strings (a plain string is wrapped as one part for list-only ones);
* tool-call ``arguments`` given as a JSON string are decoded to an object for templates that read
  the arguments as an object (Qwen3.5, Gemma 4, GPT-OSS, Llama 3.1);
* a leading system message is merged into the next message for templates without a system role
  (Gemma 2);
* role ``developer`` becomes ``system`` except for harmony (GPT-OSS) templates, where
  ``reasoning_content`` is copied to ``thinking``;
* older Gemma 4 templates get ``role: tool`` messages folded into ``tool_responses``.

Errors (syntax, ``raise_exception``, sandbox violations, runtime failures) are
:class:`ChatTemplateError` naming the template and, where known, its line.
"""

from __future__ import annotations

import copy
import json
import traceback
from datetime import datetime
from typing import Any, Callable, Iterable

import jinja2
import jinja2.ext
import jinja2.nodes
from jinja2.exceptions import SecurityError, TemplateError, TemplateSyntaxError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from zinc.errors import ZincError

__all__ = [
    "ChatTemplate",
    "ChatTemplateError",
    "TemplateCaps",
    "FALLBACK_TEMPLATES",
    "fallback_family",
    "hf_tojson",
]

MAX_SEQUENCE_REPEAT = 1_000_000  # largest string/list a template may build with `*`
MAX_POWER_EXPONENT = 4096


class ChatTemplateError(ZincError):
    """A chat template cannot be compiled or rendered.

    ``template_message`` is the template's own text for ``raise_exception`` calls (else the
    underlying error text) and ``line`` the template line, when known.
    """

    def __init__(self, message: str, *, template_message: str = "", line: int | None = None) -> None:
        super().__init__(message)
        self.template_message = template_message or message
        self.line = line


# -- the Jinja environment -----------------------------------------------------------------------

def hf_tojson(x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None,
              sort_keys: bool = False) -> str:
    """The ``tojson`` filter of HF transformers: ``json.dumps`` without HTML escaping."""
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


class _RaisedByTemplate(Exception):
    """Carries a ``raise_exception`` message out of the Jinja runtime."""


def _raise_exception(message: Any = "") -> None:
    raise _RaisedByTemplate(str(message))


class _GenerationTag(jinja2.ext.Extension):
    """``{% generation %}...{% endgeneration %}`` (HF's assistant-mask marker): renders its body."""

    tags = {"generation"}

    def parse(self, parser: Any) -> jinja2.nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.Scope(body, lineno=lineno)


class _Sandbox(ImmutableSandboxedEnvironment):
    """HF's sandbox, made strict: touching an unsafe attribute raises at once instead of rendering
    an empty string, and ``*``/``**`` cannot build huge values."""

    intercepted_binops = frozenset(["*", "**"])

    def unsafe_undefined(self, obj: Any, attribute: Any) -> Any:
        raise SecurityError(f"access to attribute {attribute!r} of {type(obj).__name__!r} "
                            "object is unsafe")

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(n, int) \
                        and len(seq) * n > MAX_SEQUENCE_REPEAT:
                    raise SecurityError(f"repeating a sequence to {len(seq) * n} items is not allowed")
        if operator == "**" and isinstance(right, (int, float)) and abs(right) > MAX_POWER_EXPONENT:
            raise SecurityError(f"exponent {right} is too large")
        return super().call_binop(context, operator, left, right)


def make_environment(sandboxed: bool = True) -> jinja2.Environment:
    """The environment chat templates render in (HF's settings). ``sandboxed=False`` is for tests."""
    cls = _Sandbox if sandboxed else jinja2.Environment
    env = cls(trim_blocks=True, lstrip_blocks=True,
              extensions=[_GenerationTag, jinja2.ext.loopcontrols])
    env.filters["tojson"] = hf_tojson
    env.globals["raise_exception"] = _raise_exception
    return env


def _template_line(exc: BaseException) -> int | None:
    """The template line of the innermost template frame in ``exc``'s traceback."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == "<template>" or frame.filename.endswith(".jinja"):
            line = frame.lineno
    return line


# -- fallback templates --------------------------------------------------------------------------

_CHATML = """\
{%- for message in messages %}
{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}
{%- endfor %}
{%- if add_generation_prompt %}
{{- '<|im_start|>assistant\\n' }}
{%- endif %}
"""

_QWEN3 = _CHATML.replace("{{- '<|im_start|>assistant\\n' }}", """\
{{- '<|im_start|>assistant\\n' }}
{%- if enable_thinking is defined and enable_thinking is false %}
{{- '<think>\\n\\n</think>\\n\\n' }}
{%- endif %}""")

_QWEN35 = _CHATML.replace("{{- '<|im_start|>assistant\\n' }}", """\
{{- '<|im_start|>assistant\\n' }}
{%- if enable_thinking is defined and enable_thinking is false %}
{{- '<think>\\n\\n</think>\\n\\n' }}
{%- else %}
{{- '<think>\\n' }}
{%- endif %}""")

_LLAMA3 = """\
{{- bos_token }}
{%- for message in messages %}
{{- '<|start_header_id|>' + message.role + '<|end_header_id|>\\n\\n' + message.content | trim + '<|eot_id|>' }}
{%- endfor %}
{%- if add_generation_prompt %}
{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}
{%- endif %}
"""

_GEMMA3 = """\
{{- bos_token }}
{%- if messages and messages[0].role == 'system' %}
{%- set first_prefix = messages[0].content | trim + '\\n\\n' %}
{%- set loop_messages = messages[1:] %}
{%- else %}
{%- set first_prefix = '' %}
{%- set loop_messages = messages %}
{%- endif %}
{%- for message in loop_messages %}
{%- set role = 'model' if message.role == 'assistant' else message.role %}
{{- '<start_of_turn>' + role + '\\n' + (first_prefix if loop.first else '') + message.content | trim + '<end_of_turn>\\n' }}
{%- endfor %}
{%- if add_generation_prompt %}
{{- '<start_of_turn>model\\n' }}
{%- endif %}
"""

_GEMMA4 = """\
{%- set thinking = enable_thinking is defined and enable_thinking %}
{%- set loop_messages = messages %}
{{- bos_token }}
{%- if thinking or (messages and messages[0].role in ['system', 'developer']) %}
{{- '<|turn>system\\n' }}
{%- if thinking %}{{- '<|think|>\\n' }}{%- endif %}
{%- if messages[0].role in ['system', 'developer'] %}
{{- messages[0].content | trim }}
{%- set loop_messages = messages[1:] %}
{%- endif %}
{{- '<turn|>\\n' }}
{%- endif %}
{%- for message in loop_messages %}
{{- '<|turn>' + ('model' if message.role == 'assistant' else message.role) + '\\n' + message.content | trim + '<turn|>\\n' }}
{%- endfor %}
{%- if add_generation_prompt %}
{{- '<|turn>model\\n' }}
{%- if not thinking %}{{- '<|channel>thought\\n<channel|>' }}{%- endif %}
{%- endif %}
"""

_HARMONY = """\
{{- '<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\\n' }}
{{- 'Knowledge cutoff: 2024-06\\nCurrent date: ' + strftime_now('%Y-%m-%d') + '\\n\\n' }}
{{- 'Reasoning: ' + (reasoning_effort if reasoning_effort is defined else 'medium') + '\\n\\n' }}
{{- '# Valid channels: analysis, commentary, final. Channel must be included for every message.<|end|>' }}
{%- set loop_messages = messages %}
{%- if messages and messages[0].role in ['system', 'developer'] %}
{{- '<|start|>developer<|message|># Instructions\\n\\n' + messages[0].content + '\\n\\n<|end|>' }}
{%- set loop_messages = messages[1:] %}
{%- endif %}
{%- for message in loop_messages %}
{%- if message.role == 'assistant' %}
{{- '<|start|>assistant<|channel|>final<|message|>' + message.content + '<|end|>' }}
{%- else %}
{{- '<|start|>' + message.role + '<|message|>' + message.content + '<|end|>' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
{{- '<|start|>assistant' }}
{%- endif %}
"""

#: Templates for GGUF files without ``tokenizer.chat_template``, by family (see
#: :func:`fallback_family`). They render plain text turns only (no tool definitions):
#: ``chatml`` (ChatML, also llama.cpp's own default), ``qwen3`` (ChatML; an empty think block when
#: ``enable_thinking`` is false), ``qwen35`` (ChatML; generation prompt opens ``<think>``),
#: ``llama3`` (Llama 3.0 header format, no generated system block), ``gemma3`` (turn format, system
#: text prepended to the first turn), ``gemma4`` (``<|turn>`` format, ``<|think|>`` when thinking),
#: ``harmony`` (GPT-OSS: generated system message, developer instructions, final-channel replies).
FALLBACK_TEMPLATES: dict[str, str] = {
    "chatml": _CHATML,
    "qwen3": _QWEN3,
    "qwen35": _QWEN35,
    "llama3": _LLAMA3,
    "gemma3": _GEMMA3,
    "gemma4": _GEMMA4,
    "harmony": _HARMONY,
}

_ARCH_FAMILY = {
    "llama": "llama3", "llama3": "llama3",
    "qwen2": "qwen3", "qwen3": "qwen3", "qwen3moe": "qwen3",
    "qwen35": "qwen35", "qwen35moe": "qwen35",
    "gemma": "gemma3", "gemma2": "gemma3", "gemma3": "gemma3", "gemma3n": "gemma3",
    "gemma4": "gemma4",
    "gpt-oss": "harmony", "gpt_oss": "harmony",
}


def fallback_family(arch: str | None, tokens: Iterable[str] | None = None) -> str:
    """The :data:`FALLBACK_TEMPLATES` key for a file of architecture ``arch`` without a template.

    ``llama`` files whose vocabulary has ``<|im_start|>`` but no ``<|start_header_id|>`` (ChatML
    fine-tunes) get ``chatml``; unknown architectures get ``chatml``, as in llama.cpp.
    """
    family = _ARCH_FAMILY.get((arch or "").lower(), "chatml")
    if family == "llama3" and tokens is not None:
        vocab = set(tokens)
        if "<|start_header_id|>" not in vocab and "<|im_start|>" in vocab:
            family = "chatml"
    return family


# -- capabilities ---------------------------------------------------------------------------------

_MARK = "ZINC_PROBE_7f3a"


class TemplateCaps:
    """What a template accepts, found by rendering probe conversations (llama.cpp's ``caps``)."""

    def __init__(self, tmpl: "ChatTemplate") -> None:
        self._tmpl = tmpl
        self._cache: dict[str, bool] = {}

    def _probe(self, key: str, messages: list, tools: list | None = None,
               reject: tuple[str, ...] = ()) -> bool:
        if key not in self._cache:
            try:
                out = self._tmpl._render_raw(messages, tools=tools)
                ok = _MARK in out and not any(r in out for r in reject)
            except Exception:  # noqa: BLE001 - a probe that fails means "not supported"
                ok = False
            self._cache[key] = ok
        return self._cache[key]

    @property
    def string_content(self) -> bool:
        return self._probe("string", [{"role": "user", "content": _MARK}])

    @property
    def typed_content(self) -> bool:
        part = [{"type": "text", "text": _MARK}]
        # A template that prints the list itself shows its repr/JSON, not just the text.
        return self._probe("typed", [{"role": "user", "content": part}],
                           reject=("'type'", '"type"'))

    @property
    def system_role(self) -> bool:
        return self._probe("system", [{"role": "system", "content": _MARK},
                                      {"role": "user", "content": "Hi"}])

    @property
    def object_arguments(self) -> bool:
        call = {"id": "call00001", "type": "function",
                "function": {"name": "tool1", "arguments": {"arg": _MARK}}}
        messages = [
            {"role": "user", "content": "User message"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "content": "Tool response", "tool_call_id": "call00001"},
            {"role": "assistant", "content": "The tool response was 'tool response'"},
            {"role": "user", "content": "User message"},
        ]
        tools = [{"type": "function", "function": {
            "name": "tool1", "description": "Tool description",
            "parameters": {"type": "object", "required": ["arg"],
                           "properties": {"arg": {"type": "string", "description": "Arg"}}}}}]
        return self._probe("object_args", messages, tools)


# -- the template ---------------------------------------------------------------------------------

class ChatTemplate:
    """A compiled chat template. ``render(messages, ...)`` returns the prompt text.

    ``now`` (a callable returning a ``datetime``) fixes the clock used by ``strftime_now`` and the
    default ``date_string``; the default is the local time, as in HF and llama.cpp.
    """

    def __init__(self, source: str, bos_token: str = "", eos_token: str = "",
                 name: str = "chat_template", *, now: Callable[[], datetime] | None = None) -> None:
        if not isinstance(source, str) or not source.strip():
            raise ChatTemplateError(f"chat template {name!r} is empty")
        self.source = source
        self.bos_token = bos_token or ""
        self.eos_token = eos_token or ""
        self.name = name
        self._now = now or datetime.now
        env = make_environment(sandboxed=True)
        env.globals["strftime_now"] = self._strftime_now
        try:
            self._template = env.from_string(source)
        except TemplateSyntaxError as e:
            raise ChatTemplateError(f"chat template {name!r}: syntax error at line {e.lineno}: "
                                    f"{e.message}", template_message=e.message or "",
                                    line=e.lineno) from None
        except TemplateError as e:
            raise ChatTemplateError(f"chat template {name!r}: {e}") from None
        self.caps = TemplateCaps(self)

    def __repr__(self) -> str:
        return f"ChatTemplate(name={self.name!r}, {len(self.source)} chars)"

    def _strftime_now(self, fmt: str) -> str:
        return self._now().strftime(fmt)

    @property
    def is_harmony(self) -> bool:
        return "<|channel|>" in self.source

    @property
    def output_family(self) -> str:
        """The output format this template teaches the model, as a ``parsing.parser_for`` name."""
        src = self.source
        if "<|channel|>" in src:
            return "gpt-oss"
        if "<|turn>" in src or "<|tool_call>" in src:
            return "gemma4"
        if "<function=" in src and "<parameter=" in src:
            return "qwen35" if "<think>" in src else "qwen3-coder"
        if "<tool_call>" in src or "<think>" in src:
            return "qwen3"
        if "<|start_header_id|>" in src:
            return "llama3"
        return "plain"

    # -- construction from GGUF metadata ---------------------------------------------------------
    @classmethod
    def from_metadata(cls, metadata: dict, arch: str | None = None, *, variant: str | None = None,
                      now: Callable[[], datetime] | None = None) -> "ChatTemplate":
        """The template of a GGUF file (``metadata`` as read by ``zinc.gguf``).

        Uses ``tokenizer.chat_template`` (or ``tokenizer.chat_template.<variant>``; a file whose
        default template is missing but has a ``tool_use`` one uses that, as llama.cpp does), with
        BOS/EOS text resolved through ``tokenizer.ggml.tokens``. Without a template it uses
        ``FALLBACK_TEMPLATES[fallback_family(arch, tokens)]``, named ``fallback:<family>``.
        """
        arch = arch or metadata.get("general.architecture")
        tokens = metadata.get("tokenizer.ggml.tokens")
        bos = _token_text(tokens, metadata.get("tokenizer.ggml.bos_token_id"))
        eos = _token_text(tokens, metadata.get("tokenizer.ggml.eos_token_id"))
        key = "tokenizer.chat_template" + (f".{variant}" if variant else "")
        source = metadata.get(key)
        if not source and not variant:
            key = "tokenizer.chat_template.tool_use"
            source = metadata.get(key)
        if isinstance(source, bytes):
            source = source.decode("utf-8", errors="replace")
        if isinstance(source, str) and source.strip():
            return cls(source, bos, eos, name=key, now=now)
        if variant:
            raise ChatTemplateError(f"GGUF metadata has no {key!r}")
        family = fallback_family(arch, tokens)
        return cls(FALLBACK_TEMPLATES[family], bos, eos, name=f"fallback:{family}", now=now)

    # -- rendering ------------------------------------------------------------------------------
    def render(self, messages: list[dict], add_generation_prompt: bool = True,
               tools: list[dict] | None = None, *, chat_template_kwargs: dict | None = None,
               **kwargs: Any) -> str:
        """Render ``messages`` (OpenAI-style dicts) to the prompt text.

        Extra keyword arguments and ``chat_template_kwargs`` become template variables (a value of
        None leaves the variable undefined). Raises :class:`ChatTemplateError`.
        """
        if not isinstance(messages, (list, tuple)):
            raise ChatTemplateError(f"chat template {self.name!r}: messages must be a list, "
                                    f"got {type(messages).__name__}")
        extra = dict(chat_template_kwargs or {})
        extra.update(kwargs)
        for reserved in ("messages", "tools", "add_generation_prompt"):
            if reserved in extra:
                raise ChatTemplateError(f"chat template {self.name!r}: {reserved!r} cannot be "
                                        "passed as a template keyword argument")
        extra = {k: v for k, v in extra.items() if v is not None}
        msgs = self.normalize_messages(messages)
        return self._render_raw(msgs, tools=tools, add_generation_prompt=add_generation_prompt,
                                **extra)

    def _render_raw(self, messages: list, tools: list | None = None,
                    add_generation_prompt: bool = True, **extra: Any) -> str:
        ctx: dict[str, Any] = {"bos_token": self.bos_token, "eos_token": self.eos_token}
        if "date_string" in self.source:
            ctx["date_string"] = self._now().strftime("%d %b %Y")
        ctx.update(extra)
        ctx.update(messages=messages, tools=tools, add_generation_prompt=add_generation_prompt)
        try:
            return self._template.render(**ctx)
        except RecursionError:
            raise ChatTemplateError(f"chat template {self.name!r}: recursion too deep") from None
        except Exception as e:  # noqa: BLE001 - any template failure is the template's error
            line = _template_line(e)
            where = f" line {line}" if line else ""
            if isinstance(e, _RaisedByTemplate):
                text = str(e)
            elif isinstance(e, SecurityError):
                text = f"sandbox violation: {e}"
            else:
                text = f"{type(e).__name__}: {e}"
            raise ChatTemplateError(f"chat template {self.name!r}{where}: {text}",
                                    template_message=str(e), line=line) from None

    # -- input fixes -----------------------------------------------------------------------------
    def normalize_messages(self, messages: Iterable[dict]) -> list[dict]:
        """A copy of ``messages`` with the input fixes listed in the module docstring applied."""
        msgs = []
        for i, m in enumerate(messages):
            if not isinstance(m, dict):
                raise ChatTemplateError(f"chat template {self.name!r}: message {i} is not an object")
            msgs.append(copy.deepcopy(m))
        harmony = self.is_harmony
        for m in msgs:
            if m.get("role") == "developer" and not harmony:
                m["role"] = "system"
            if m.get("content") is None:
                m["content"] = ""
            if harmony and isinstance(m.get("reasoning_content"), str) and "thinking" not in m:
                m["thinking"] = m["reasoning_content"]
                if m.get("tool_calls"):
                    m.pop("content", None)
            self._fix_content(m)
            if m.get("tool_calls"):
                self._fix_arguments(m)
        if msgs and msgs[0].get("role") == "system" and not self.caps.system_role:
            msgs = _merge_system(msgs)
        if "'<|tool_call>call:'" in self.source and "{#- OpenAI Chat Completions:" not in self.source:
            msgs = _fold_gemma4_tool_responses(msgs)
        return msgs

    def _fix_content(self, m: dict) -> None:
        content = m.get("content")
        if isinstance(content, list):
            if not self.caps.typed_content:
                m["content"] = self._join_parts(content)
        elif isinstance(content, str) and "content" in m:
            if not self.caps.string_content and self.caps.typed_content:
                m["content"] = [{"type": "text", "text": content}]

    def _join_parts(self, parts: list) -> str:
        texts = []
        for p in parts:
            if isinstance(p, str):
                texts.append(p)
            elif isinstance(p, dict) and p.get("type", "text") == "text":
                texts.append(str(p.get("text", "")))
            else:
                kind = p.get("type") if isinstance(p, dict) else type(p).__name__
                raise ChatTemplateError(f"chat template {self.name!r} only takes text content; "
                                        f"got a {kind!r} content part")
        return "\n".join(texts)

    def _fix_arguments(self, m: dict) -> None:
        for call in m["tool_calls"]:
            fn = call.get("function") if isinstance(call, dict) else None
            if not isinstance(fn, dict) or not isinstance(fn.get("arguments"), str):
                continue
            if not self.caps.object_arguments:
                return
            try:
                fn["arguments"] = json.loads(fn["arguments"])
            except ValueError:
                pass


def _merge_system(msgs: list[dict]) -> list[dict]:
    """Merge a leading system message into the next message (templates without a system role)."""
    system, rest = msgs[0], msgs[1:]
    if not rest:
        return rest
    text = system.get("content")
    if isinstance(text, list):
        text = "\n".join(str(p.get("text", "")) for p in text if isinstance(p, dict))
    nxt = rest[0]
    if isinstance(nxt.get("content"), list):
        nxt["content"] = [{"type": "text", "text": str(text)}] + nxt["content"]
    else:
        nxt["content"] = f"{text}\n{nxt.get('content') or ''}"
    return rest


def _fold_gemma4_tool_responses(msgs: list[dict]) -> list[dict]:
    """Older Gemma 4 templates want tool results as ``tool_responses`` on the assistant message:
    fold ``assistant(tool_calls) tool+ [assistant(content)]`` into one assistant message."""
    out: list[dict] = []
    i = 0
    while i < len(msgs):
        m = msgs[i]
        if m.get("role") != "assistant" or not m.get("tool_calls"):
            out.append(m)
            i += 1
            continue
        calls = list(m["tool_calls"])
        merged: dict[str, Any] = {"role": "assistant", "tool_calls": calls}
        if isinstance(m.get("reasoning_content"), str):
            merged["reasoning_content"] = m["reasoning_content"]
        responses = []
        i += 1
        while i < len(msgs) and msgs[i].get("role") == "tool":
            responses.append(_gemma4_response(msgs[i], calls, len(responses)))
            i += 1
        if i < len(msgs) and msgs[i].get("role") == "assistant" and not msgs[i].get("tool_calls") \
                and msgs[i].get("content"):
            merged["content"] = msgs[i]["content"]
            i += 1
        if responses:
            merged["tool_responses"] = responses
        out.append(merged)
    return out


def _gemma4_response(msg: dict, calls: list, index: int) -> dict:
    body = msg.get("content")
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except ValueError:
            pass
    name = ""
    if index < len(calls) and isinstance(calls[index], dict):
        name = (calls[index].get("function") or {}).get("name", "")
    return {"name": name or msg.get("tool_call_id", ""), "response": body}


def _token_text(tokens: Any, token_id: Any) -> str:
    """The text of token ``token_id`` in the GGUF token list, or "" when absent/out of range."""
    if tokens is None or token_id is None:
        return ""
    try:
        i = int(token_id)
        if 0 <= i < len(tokens):
            return str(tokens[i])
    except (TypeError, ValueError):
        pass
    return ""
