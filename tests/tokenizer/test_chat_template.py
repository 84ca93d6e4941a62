"""Chat templates: parity with HF-style plain Jinja rendering, fallbacks, input fixes, sandbox."""

from __future__ import annotations

import copy
import json
from datetime import datetime
from functools import lru_cache
from pathlib import Path

import jinja2
import jinja2.ext
import jinja2.nodes
import pytest

from zinc.tokenizer.chat_template import (
    FALLBACK_TEMPLATES,
    ChatTemplate,
    ChatTemplateError,
    fallback_family,
)

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
TEMPLATES = SHARED / "data" / "templates"
FIXED_NOW = datetime(2025, 3, 4, 12, 30)
BOS, EOS = "<BOS>", "<EOS>"


def _now() -> datetime:
    return FIXED_NOW


def template_path(name: str) -> Path:
    path = TEMPLATES / name
    if not path.is_file():
        pytest.skip(f"{path} is not present (needs ../shared)")
    return path


# -- the reference: plain jinja2 with the helpers HF transformers installs ------------------------

def _ref_tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def _ref_raise(message):
    raise jinja2.exceptions.TemplateError(message)


@lru_cache(maxsize=None)
def reference(name: str) -> jinja2.Template:
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True,
                             extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = _ref_tojson
    env.globals["raise_exception"] = _ref_raise
    env.globals["strftime_now"] = lambda fmt: FIXED_NOW.strftime(fmt)
    return env.from_string(template_path(name).read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def ours(name: str) -> ChatTemplate:
    return ChatTemplate(template_path(name).read_text(encoding="utf-8"), BOS, EOS, name=name,
                        now=_now)


def render_reference(name, messages, tools=None, add_generation_prompt=True, **kwargs):
    ctx = dict(bos_token=BOS, eos_token=EOS, date_string=FIXED_NOW.strftime("%d %b %Y"))
    ctx.update(kwargs)
    return reference(name).render(messages=copy.deepcopy(messages), tools=tools,
                                  add_generation_prompt=add_generation_prompt, **ctx)


# -- conversations ---------------------------------------------------------------------------------

WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather",
    "description": "Get the current weather for a city.",
    "parameters": {"type": "object", "required": ["city"], "properties": {
        "city": {"type": "string", "description": "City name, e.g. Zürich"},
        "days": {"type": "integer", "description": "Forecast days"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}}}}
TIME_TOOL = {"type": "function", "function": {
    "name": "get_time", "description": "Current time in a timezone.",
    "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}}}}
TOOLS = [WEATHER_TOOL, TIME_TOOL]

CALL = {"id": "call_1", "type": "function",
        "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}}

SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
USER = {"role": "user", "content": "What's the weather in Paris?"}

CONVERSATIONS = {
    "user": [USER],
    "system_user": [SYSTEM, USER],
    "multi_turn": [
        {"role": "user", "content": "Hi!"},
        {"role": "assistant", "content": "Hello! How can I help?"},
        {"role": "user", "content": "Tell me a joke."},
    ],
    "multi_turn_system": [
        SYSTEM,
        {"role": "user", "content": "Hi!"},
        {"role": "assistant", "content": "Hello! How can I help?"},
        {"role": "user", "content": "Tell me a joke."},
    ],
    "unicode": [
        {"role": "user", "content": "Grüße aus Zürich — 你好 👋"},
        {"role": "assistant", "content": "Hallo! 你好！"},
        {"role": "user", "content": "  spaces around  "},
    ],
    "tool_round_trip": [
        SYSTEM, USER,
        {"role": "assistant", "content": "", "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "name": "get_weather",
         "content": '{"temperature": 18, "sky": "cloudy"}'},
        {"role": "assistant", "content": "It is 18 °C and cloudy in Paris."},
        {"role": "user", "content": "Thanks! And tomorrow?"},
    ],
    "tool_pending": [
        USER,
        {"role": "assistant", "content": "", "reasoning_content": "I need the weather tool.",
         "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "name": "get_weather",
         "content": '{"temperature": 18}'},
    ],
}

# conversations a template cannot take (its reference raises or it needs another input shape)
UNSUPPORTED = {
    "google-gemma-2-2b-it.jinja": {"system_user", "multi_turn_system", "tool_round_trip",
                                   "tool_pending"},
    # harmony: reasoning_content is mapped to `thinking` on purpose (llama.cpp does the same)
    "openai-gpt-oss-120b.jinja": {"tool_pending"},
    # the older Gemma 4 template takes tool results as `tool_responses` (tested separately)
    "google-gemma-4-31B-it-interleaved.jinja": {"tool_round_trip", "tool_pending"},
}

TEMPLATE_KWARGS = {
    "Qwen-Qwen3-0.6B.jinja": [{}, {"enable_thinking": True}, {"enable_thinking": False}],
    "Qwen3.5-4B.jinja": [{}, {"enable_thinking": True}, {"enable_thinking": False}],
    "Qwen3-Coder.jinja": [{}],
    "google-gemma-2-2b-it.jinja": [{}],
    "google-gemma-4-31B-it.jinja": [{}, {"enable_thinking": True}, {"enable_thinking": False}],
    "google-gemma-4-31B-it-interleaved.jinja": [{}, {"enable_thinking": True}],
    "meta-llama-Llama-3.1-8B-Instruct.jinja": [{}, {"tools_in_user_message": False},
                                               {"date_string": "01 Jan 2030"}],
    "openai-gpt-oss-120b.jinja": [{}, {"reasoning_effort": "high"},
                                  {"builtin_tools": ["browser", "python"],
                                   "model_identity": "You are Zinc."}],
}


def _cases():
    for name, kwarg_sets in TEMPLATE_KWARGS.items():
        for conv in CONVERSATIONS:
            if conv in UNSUPPORTED.get(name, ()):
                continue
            for i, kw in enumerate(kwarg_sets):
                for with_tools in (False, True):
                    if with_tools and name == "google-gemma-2-2b-it.jinja":
                        continue
                    yield pytest.param(name, conv, kw, with_tools,
                                       id=f"{name[:-6]}-{conv}-kw{i}-{'tools' if with_tools else 'notools'}")


@pytest.mark.parametrize("name,conv,kwargs,with_tools", list(_cases()))
def test_real_template_matches_plain_jinja(name, conv, kwargs, with_tools):
    messages = CONVERSATIONS[conv]
    tools = TOOLS if with_tools else None
    if conv.startswith("tool") and not with_tools and "gemma-4" in name:
        tools = None  # Gemma 4 renders calls without declarations too
    for agp in (True, False):
        if conv == "tool_pending" and not agp:
            continue
        expected = render_reference(name, messages, tools, agp, **kwargs)
        got = ours(name).render(copy.deepcopy(messages), add_generation_prompt=agp, tools=tools,
                                **kwargs)
        assert got == expected


def test_real_templates_typed_content_kept_for_list_aware_templates():
    parts = [{"type": "text", "text": "Describe"}, {"type": "text", "text": "this."}]
    for name in ("Qwen3.5-4B.jinja", "google-gemma-4-31B-it.jinja"):
        messages = [{"role": "user", "content": parts}]
        assert ours(name).caps.typed_content
        assert ours(name).render(copy.deepcopy(messages)) == render_reference(name, messages)


def test_gemma4_interleaved_folds_tool_messages_into_tool_responses():
    name = "google-gemma-4-31B-it-interleaved.jinja"
    native = [
        USER,
        {"role": "assistant", "tool_calls": [CALL],
         "tool_responses": [{"name": "get_weather", "response": {"temperature": 18}}],
         "content": "It is 18 °C."},
        {"role": "user", "content": "Thanks"},
    ]
    openai_style = [
        USER,
        {"role": "assistant", "content": "", "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"temperature": 18}'},
        {"role": "assistant", "content": "It is 18 °C."},
        {"role": "user", "content": "Thanks"},
    ]
    expected = render_reference(name, native, TOOLS)
    assert ours(name).render(openai_style, tools=TOOLS) == expected
    assert "<|tool_response>response:get_weather{temperature:18}<tool_response|>" in expected


def test_known_prompts_of_real_templates():
    q35 = ours("Qwen3.5-4B.jinja")
    assert q35.render([USER]).endswith("<|im_start|>assistant\n<think>\n")
    assert q35.render([USER], enable_thinking=False).endswith(
        "<|im_start|>assistant\n<think>\n\n</think>\n\n")
    g4 = ours("google-gemma-4-31B-it.jinja")
    assert g4.render([USER]).startswith(BOS)
    assert g4.render([USER]).endswith("<|turn>model\n<|channel>thought\n<channel|>")
    assert g4.render([USER], enable_thinking=True).startswith(BOS + "<|turn>system\n<|think|>\n")
    oss = ours("openai-gpt-oss-120b.jinja").render([USER], reasoning_effort="low")
    assert "Current date: 2025-03-04" in oss and "Reasoning: low" in oss
    assert oss.endswith("<|start|>assistant")
    llama = ours("meta-llama-Llama-3.1-8B-Instruct.jinja").render([USER])
    assert llama.startswith(BOS + "<|start_header_id|>system<|end_header_id|>\n\n")
    assert "Today Date: 04 Mar 2025" in llama  # date_string defaults to `now`


def test_output_family_of_real_templates():
    expected = {
        "Qwen-Qwen3-0.6B.jinja": "qwen3", "Qwen3.5-4B.jinja": "qwen35",
        "Qwen3-Coder.jinja": "qwen3-coder", "google-gemma-2-2b-it.jinja": "plain",
        "google-gemma-4-31B-it.jinja": "gemma4", "google-gemma-4-31B-it-interleaved.jinja": "gemma4",
        "meta-llama-Llama-3.1-8B-Instruct.jinja": "llama3", "openai-gpt-oss-120b.jinja": "gpt-oss",
    }
    for name, family in expected.items():
        assert ours(name).output_family == family, name


# -- input fixes -----------------------------------------------------------------------------------

def test_typed_content_joined_for_string_only_templates():
    name = "Qwen-Qwen3-0.6B.jinja"
    parts = [{"type": "text", "text": "Line one"}, {"type": "text", "text": "line two"}]
    assert not ours(name).caps.typed_content
    got = ours(name).render([{"role": "user", "content": parts}])
    assert got == render_reference(name, [{"role": "user", "content": "Line one\nline two"}])
    with pytest.raises(ChatTemplateError, match="image_url"):
        ours(name).render([{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}])


def test_string_arguments_decoded_for_object_argument_templates():
    for name in ("Qwen3.5-4B.jinja", "openai-gpt-oss-120b.jinja", "google-gemma-4-31B-it.jinja",
                 "Qwen-Qwen3-0.6B.jinja", "meta-llama-Llama-3.1-8B-Instruct.jinja"):
        conv = copy.deepcopy(CONVERSATIONS["tool_round_trip"])
        as_string = copy.deepcopy(conv)
        as_string[2]["tool_calls"][0]["function"]["arguments"] = '{"city": "Paris", "days": 2}'
        assert ours(name).caps.object_arguments, name
        expected = render_reference(name, conv, TOOLS)
        assert ours(name).render(as_string, tools=TOOLS) == expected, name


def test_null_content_and_developer_role():
    name = "Qwen-Qwen3-0.6B.jinja"
    conv = copy.deepcopy(CONVERSATIONS["tool_round_trip"])
    conv[0]["role"] = "developer"
    conv[2]["content"] = None
    expected_conv = copy.deepcopy(CONVERSATIONS["tool_round_trip"])
    assert ours(name).render(conv, tools=TOOLS) == render_reference(name, expected_conv, TOOLS)


def test_system_merged_for_templates_without_system_role():
    name = "google-gemma-2-2b-it.jinja"
    assert not ours(name).caps.system_role
    got = ours(name).render([SYSTEM, {"role": "user", "content": "Hi"}])
    assert got == render_reference(name, [{"role": "user",
                                           "content": SYSTEM["content"] + "\nHi"}])


def test_raise_exception_becomes_chat_template_error():
    name = "google-gemma-2-2b-it.jinja"
    with pytest.raises(ChatTemplateError) as info:
        ours(name).render([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])
    assert info.value.template_message == \
        "Conversation roles must alternate user/assistant/user/assistant/..."
    assert info.value.line == 1


def test_harmony_reasoning_content_becomes_thinking():
    name = "openai-gpt-oss-120b.jinja"
    conv = copy.deepcopy(CONVERSATIONS["tool_pending"])
    got = ours(name).render(conv, tools=TOOLS)
    want = copy.deepcopy(conv)
    want[1]["thinking"] = want[1].pop("reasoning_content")
    del want[1]["content"]
    assert got == render_reference(name, want, TOOLS)
    assert "<|channel|>analysis<|message|>I need the weather tool.<|end|>" in got


# -- fallbacks and GGUF metadata -------------------------------------------------------------------

def _meta(arch, template=None, tokens=None, bos=None, eos=None):
    md = {"general.architecture": arch,
          "tokenizer.ggml.tokens": tokens or ["<unk>", "<s>", "</s>", "hello"]}
    if bos is not None:
        md["tokenizer.ggml.bos_token_id"] = bos
    if eos is not None:
        md["tokenizer.ggml.eos_token_id"] = eos
    if template is not None:
        md["tokenizer.chat_template"] = template
    return md


def test_from_metadata_uses_template_and_resolves_bos_eos():
    md = _meta("qwen3", "{{ bos_token }}|{% for m in messages %}{{ m.content }}{% endfor %}|"
               "{{ eos_token }}", bos=1, eos=2)
    t = ChatTemplate.from_metadata(md, "qwen3")
    assert (t.bos_token, t.eos_token, t.name) == ("<s>", "</s>", "tokenizer.chat_template")
    assert t.render([{"role": "user", "content": "x"}]) == "<s>|x|</s>"
    md["tokenizer.ggml.bos_token_id"] = 99  # out of range: no BOS text
    assert ChatTemplate.from_metadata(md).bos_token == ""


def test_from_metadata_tool_use_variant():
    md = _meta("llama", bos=1)
    md["tokenizer.chat_template.tool_use"] = "TOOL{{ messages | length }}"
    assert ChatTemplate.from_metadata(md).render([USER]) == "TOOL1"
    assert ChatTemplate.from_metadata(md, variant="tool_use").name == \
        "tokenizer.chat_template.tool_use"
    with pytest.raises(ChatTemplateError, match="rag"):
        ChatTemplate.from_metadata(md, variant="rag")


def test_fallback_family_per_arch():
    assert fallback_family("llama") == "llama3"
    assert fallback_family("llama", ["<|im_start|>", "<|im_end|>"]) == "chatml"
    assert fallback_family("llama", ["<|start_header_id|>", "<|im_start|>"]) == "llama3"
    assert fallback_family("qwen3moe") == "qwen3"
    assert fallback_family("qwen35moe") == "qwen35"
    assert fallback_family("gemma3") == "gemma3"
    assert fallback_family("gemma4") == "gemma4"
    assert fallback_family("gpt-oss") == "harmony"
    assert fallback_family("mamba") == "chatml"
    assert fallback_family(None) == "chatml"


CHAT = [SYSTEM, {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "Bye"}]


def test_fallback_templates_render_expected_text():
    def fb(arch, tokens=None, bos=None):
        t = ChatTemplate.from_metadata(_meta(arch, tokens=tokens, bos=bos), now=_now)
        assert t.name.startswith("fallback:")
        return t

    assert fb("mamba").render(CHAT) == (
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n"
        "<|im_start|>assistant\n")
    llama = fb("llama", ["<|begin_of_text|>", "<|start_header_id|>"], bos=0).render(CHAT)
    assert llama == (
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are a helpful "
        "assistant.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\nHello.<|eot_id|><|start_header_id|>user"
        "<|end_header_id|>\n\nBye<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n")
    gemma3 = fb("gemma3", ["<pad>", "<eos>", "<bos>"], bos=2).render(CHAT)
    assert gemma3 == (
        "<bos><start_of_turn>user\nYou are a helpful assistant.\n\nHi<end_of_turn>\n"
        "<start_of_turn>model\nHello.<end_of_turn>\n<start_of_turn>user\nBye<end_of_turn>\n"
        "<start_of_turn>model\n")
    q35 = fb("qwen35")
    assert q35.render(CHAT).endswith("<|im_start|>assistant\n<think>\n")
    assert q35.render(CHAT, enable_thinking=False).endswith("assistant\n<think>\n\n</think>\n\n")
    q3 = fb("qwen3")
    assert q3.render(CHAT).endswith("<|im_start|>assistant\n")
    assert q3.render(CHAT, enable_thinking=False).endswith("assistant\n<think>\n\n</think>\n\n")


@pytest.mark.parametrize("family,name,kwarg_sets", [
    ("harmony", "openai-gpt-oss-120b.jinja", [{}, {"reasoning_effort": "high"}]),
    ("gemma4", "google-gemma-4-31B-it.jinja", [{}, {"enable_thinking": True}]),
    ("qwen35", "Qwen3.5-4B.jinja", [{}, {"enable_thinking": False}]),
    ("qwen3", "Qwen-Qwen3-0.6B.jinja", [{}, {"enable_thinking": False}]),
])
def test_fallback_matches_official_template_on_plain_chats(family, name, kwarg_sets):
    fb = ChatTemplate(FALLBACK_TEMPLATES[family], BOS, EOS, now=_now)
    for conv in (CHAT, CHAT[1:], [{"role": "user", "content": "Hi"}]):
        for kw in kwarg_sets:
            assert fb.render(conv, **kw) == render_reference(name, conv, **kw)


# -- inline templates (no ../shared needed) --------------------------------------------------------

INLINE = """\
{%- set ns = namespace(n=0) %}
{%- for m in messages %}
{%- if loop.index > 2 %}{% break %}{% endif %}
{%- set ns.n = ns.n + 1 %}
{% generation %}[{{ m.role }}] {{ m.content }}{% endgeneration %}
{%- endfor %}
|{{ ns.n }}|{{ tools | tojson }}|{{ tools | tojson(indent=2, sort_keys=True) }}
|{{ {"b": "ü", "a": 1} | tojson(separators=(",", ":")) }}|{{ strftime_now("%Y/%m/%d") }}
|{{ enable_thinking is defined }}|{{ custom }}|{{ bos_token }}{{ eos_token }}
{%- if add_generation_prompt %}>{% endif %}"""


def test_inline_template_helpers():
    t = ChatTemplate(INLINE, "<b>", "<e>", name="inline", now=_now)
    msgs = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
            {"role": "user", "content": "c"}]
    tools = [{"name": "é", "z": 1, "a": 2}]
    out = t.render(msgs, tools=tools, enable_thinking=None, chat_template_kwargs={"custom": "C"})
    assert out == (
        "[user] a[assistant] b|2|" + '[{"name": "é", "z": 1, "a": 2}]|'
        + json.dumps(tools, indent=2, sort_keys=True, ensure_ascii=False)
        + '\n|{"b":"ü","a":1}|2025/03/04\n|False|C|<b><e>>')
    assert t.render(msgs, add_generation_prompt=False, enable_thinking=False).endswith("|True||<b><e>")
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True,
                             extensions=[jinja2.ext.loopcontrols, _HFGeneration])
    env.filters["tojson"] = _ref_tojson
    env.globals["strftime_now"] = lambda fmt: FIXED_NOW.strftime(fmt)
    ref = env.from_string(INLINE).render(messages=msgs, tools=tools, add_generation_prompt=True,
                                         bos_token="<b>", eos_token="<e>", custom="C")
    assert out == ref


class _HFGeneration(jinja2.ext.Extension):
    """HF's AssistantTracker renders a {% generation %} block's body in a call block."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

    def _body(self, caller):
        return caller()


def test_inline_template_date_string_and_kwargs():
    t = ChatTemplate("{{ date_string }}", now=_now)
    assert t.render([]) == "04 Mar 2025"
    assert t.render([], date_string="x") == "x"
    with pytest.raises(ChatTemplateError, match="messages"):
        t.render([], chat_template_kwargs={"messages": []})
    with pytest.raises(ChatTemplateError, match="must be a list"):
        t.render("hello")


def test_lstrip_and_trim_blocks_like_hf():
    t = ChatTemplate("  {% if true %}\nA\n  {% endif %}\nB", name="ws")
    assert t.render([]) == "A\nB"


def test_syntax_error_names_the_line():
    with pytest.raises(ChatTemplateError, match=r"line 3") as info:
        ChatTemplate("ok\n{% if messages %}\n{{ messages }\n{% endif %}", name="broken")
    assert info.value.line == 3
    with pytest.raises(ChatTemplateError, match="empty"):
        ChatTemplate("  ")


def test_runtime_error_names_the_line():
    t = ChatTemplate("a\nb\n{{ 1 / 0 }}", name="div")
    with pytest.raises(ChatTemplateError, match=r"'div' line 3: ZeroDivisionError"):
        t.render([])
    t = ChatTemplate("x\n{{ raise_exception('Only user and assistant roles are supported!') }}")
    with pytest.raises(ChatTemplateError) as info:
        t.render([])
    assert info.value.template_message == "Only user and assistant roles are supported!"
    assert info.value.line == 2


@pytest.mark.parametrize("source", [
    "{{ ''.__class__ }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ messages.__class__.__base__.__subclasses__() }}",
    "{{ cycler.__init__.__globals__.os }}",
    "{{ joiner.__init__.__globals__ }}",
    "{{ namespace.__init__.__globals__['__builtins__'] }}",
    "{{ raise_exception.__globals__ }}",
    "{{ self._TemplateReference__context }}",
    "{{ '{0.__class__}'.format(1) }}",
    "{{ messages.append(1) }}",
    "{% set x = messages[0].update({'role': 'hacked'}) %}",
    "{{ 'a' * 100000000 }}",
    "{{ 9 ** 999999 }}",
    "{% for i in range(100000000) %}{% endfor %}",
])
def test_sandbox_escapes_raise(source):
    t = ChatTemplate(source, name="evil")
    with pytest.raises(ChatTemplateError, match="evil"):
        t.render([{"role": "user", "content": "x"}])


def test_sandbox_error_is_clear():
    t = ChatTemplate("ok\n{{ ''.__class__ }}", name="evil")
    with pytest.raises(ChatTemplateError, match=r"line 2: sandbox violation: access to attribute "
                                                 r"'__class__'"):
        t.render([])


def test_messages_are_not_mutated():
    t = ChatTemplate(FALLBACK_TEMPLATES["chatml"])
    msgs = [{"role": "developer", "content": None},
            {"role": "user", "content": [{"type": "text", "text": "x"}]}]
    before = copy.deepcopy(msgs)
    assert t.render(msgs) == ("<|im_start|>system\n<|im_end|>\n<|im_start|>user\nx<|im_end|>\n"
                              "<|im_start|>assistant\n")
    assert msgs == before
