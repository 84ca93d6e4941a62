"""Output parsing: reasoning / content / tool calls per family, split-invariant streaming."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zinc.tokenizer.chat_template import FALLBACK_TEMPLATES, ChatTemplate
from zinc.tokenizer.parsing import (
    Delta,
    ParsedOutput,
    collect,
    family_of,
    parse,
    parser_for,
)

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
TEMPLATES = SHARED / "data" / "templates"

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Weather for a city.",
    "parameters": {"type": "object", "required": ["city"], "properties": {
        "city": {"type": "string"}, "days": {"type": "integer"},
        "metric": {"type": "boolean"}, "hours": {"type": "array"},
        "zip": {"type": "string"}}}}}
TOOLS = [WEATHER]


def call(name: str, args, index: int = 0) -> dict:
    if not isinstance(args, str):
        args = json.dumps(args, ensure_ascii=False)
    return {"id": f"call_{index}", "type": "function",
            "function": {"name": name, "arguments": args}}


def check(family: str, text: str, reasoning: str = "", content: str = "",
          tool_calls: list | None = None, **opts) -> None:
    """One-shot result as expected, and the same for every split point and char-by-char feeding."""
    opts.setdefault("id_prefix", "call_")
    expected = ParsedOutput(reasoning, content, tool_calls or [])
    assert parse(text, family, **opts) == expected
    assert parser_for(family, **opts).parse(text) == expected
    for i in range(len(text) + 1):
        p = parser_for(family, **opts)
        deltas = p.feed(text[:i]) + p.feed(text[i:]) + p.finish()
        assert collect(deltas) == expected, f"split at {i}: {text[:i]!r} | {text[i:]!r}"
    p = parser_for(family, **opts)
    deltas = [d for ch in text for d in p.feed(ch)] + p.finish()
    assert collect(deltas) == expected, "char by char"
    for d in deltas:
        assert sum(bool(x) for x in (d.reasoning, d.content, d.tool_call)) == 1


# -- Qwen3 -----------------------------------------------------------------------------------------

def test_qwen3_thinking_and_answer():
    check("qwen3", "<think>\nThe user greets me. I should reply politely.\n</think>\n\n"
          "Hello! How can I help you today?",
          reasoning="The user greets me. I should reply politely.",
          content="Hello! How can I help you today?")


def test_qwen3_no_thinking_and_end_token():
    check("qwen3", "Hello! 2 < 3 and a <b>bold</b> tag.<|im_end|>",
          content="Hello! 2 < 3 and a <b>bold</b> tag.")
    check("qwen3", "<think>\n\n</think>\n\nJust content.", content="Just content.")


def test_qwen3_json_tool_calls():
    text = ("<think>\nI need the weather for two cities.\n</think>\n\n"
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n"
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Zürich\", \"days\": 2}}\n"
            "</tool_call>")
    check("qwen3", text, reasoning="I need the weather for two cities.",
          tool_calls=[call("get_weather", {"city": "Paris"}, 0),
                      call("get_weather", {"city": "Zürich", "days": 2}, 1)])


def test_qwen3_content_then_tool_call_and_string_arguments():
    text = ("Let me look that up.\n\n<tool_call>\n"
            "{\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"Oslo\\\"}\"}\n</tool_call>")
    check("qwen3", text, content="Let me look that up.",
          tool_calls=[call("get_weather", '{"city": "Oslo"}')])


def test_qwen3_malformed_tool_call_stays_content():
    text = "Try: <tool_call>\n{not json}\n</tool_call> done"
    check("qwen3", text, content="Try:<tool_call>\n{not json}\n</tool_call>done")
    check("qwen3", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}",
          tool_calls=[call("get_weather", {"city": "Rome"})])  # unterminated at the end


def test_literal_think_after_content_stays_literal():
    check("qwen3", "Use the <think> tag like </think> this.",
          content="Use the <think> tag like </think> this.")


# -- Qwen3.5 / Qwen3-Coder -------------------------------------------------------------------------

QWEN35_CALL = ("The user wants the weather.\n</think>\n\nLet me check.\n\n<tool_call>\n"
               "<function=get_weather>\n<parameter=city>\nNew York\n</parameter>\n"
               "<parameter=days>\n3\n</parameter>\n<parameter=zip>\n10001\n</parameter>\n"
               "<parameter=hours>\n[9, 12]\n</parameter>\n</function>\n</tool_call>")


def test_qwen35_starts_inside_reasoning_with_typed_parameters():
    check("qwen35", QWEN35_CALL, reasoning="The user wants the weather.", content="Let me check.",
          tool_calls=[call("get_weather", {"city": "New York", "days": 3, "zip": "10001",
                                           "hours": [9, 12]})], tools=TOOLS)


def test_qwen35_parameters_are_strings_without_schema():
    check("qwen35", QWEN35_CALL, reasoning="The user wants the weather.", content="Let me check.",
          tool_calls=[call("get_weather", {"city": "New York", "days": "3", "zip": "10001",
                                           "hours": "[9, 12]"})])


def test_qwen35_tool_call_ends_reasoning_and_multiline_values():
    text = ("I should write the file.\n<tool_call>\n<function=write_file>\n<parameter=path>\n"
            "a.py\n</parameter>\n<parameter=text>\nline 1\n\nline 3\n</parameter>\n</function>\n"
            "</tool_call>")
    check("qwen35", text, reasoning="I should write the file.",
          tool_calls=[call("write_file", {"path": "a.py", "text": "line 1\n\nline 3"})])


def test_qwen35_start_follows_the_prompt():
    tmpl = ChatTemplate(FALLBACK_TEMPLATES["qwen35"])
    msgs = [{"role": "user", "content": "Hi"}]
    on, off = tmpl.render(msgs), tmpl.render(msgs, enable_thinking=False)
    check("qwen35", "Greeting.\n</think>\n\nHello!", reasoning="Greeting.", content="Hello!",
          prompt=on)
    check("qwen35", "Hello!", content="Hello!", prompt=off)
    check("qwen35", "Hello!", content="Hello!", enable_thinking=False)
    check("qwen3", "Thinking.\n</think>\n\nHi", reasoning="Thinking.", content="Hi",
          start_in_reasoning=True)
    # the model repeating the opening tag is fine
    check("qwen35", "<think>\nHmm.\n</think>\n\nOK", reasoning="Hmm.", content="OK")


def test_qwen3_coder_bare_function_and_xml_call():
    bare = ("Sure.\n<function=get_weather>\n<parameter=city>\nLima\n</parameter>\n"
            "<parameter=metric>\ntrue\n</parameter>\n</function>\n</tool_call>")
    check("qwen3-coder", bare, content="Sure.",
          tool_calls=[call("get_weather", {"city": "Lima", "metric": True})], tools=TOOLS)
    # without tools a bare <function=...> is just text
    check("qwen3-coder", "x <function=f> y", content="x <function=f> y")


# -- Gemma 4 ---------------------------------------------------------------------------------------

def test_gemma4_thinking_channel():
    check("gemma4", "<|channel>thought\nThe user asks for 2+2. That is 4.<channel|>2 + 2 = 4.<turn|>",
          reasoning="The user asks for 2+2. That is 4.", content="2 + 2 = 4.")
    check("gemma4", "<|channel>thought\n<channel|>Direct answer.", content="Direct answer.")
    # stray channel markers are dropped, as llama.cpp does
    check("gemma4", "Answer text.<channel|>", content="Answer text.")


def test_gemma4_tool_calls():
    text = ("<|channel>thought\nNeed weather.<channel|>Checking.<|tool_call>call:get_weather{"
            "city:<|\"|>Paris, {FR}<|\"|>,days:3,hours:[9,12.5],metric:true,opts:{deep:null}}"
            "<tool_call|><|tool_call>call:get_time{tz:<|\"|>UTC<|\"|>}<tool_call|><|tool_response>")
    check("gemma4", text, reasoning="Need weather.", content="Checking.", tool_calls=[
        call("get_weather", {"city": "Paris, {FR}", "days": 3, "hours": [9, 12.5],
                             "metric": True, "opts": {"deep": None}}, 0),
        call("get_time", {"tz": "UTC"}, 1)])


def test_gemma4_bad_tool_call_stays_content():
    check("gemma4", "<|tool_call>call:broken{a:<tool_call|>",
          content="<|tool_call>call:broken{a:<tool_call|>")


def test_gemma4_tool_call_round_trip_through_real_template():
    path = TEMPLATES / "google-gemma-4-31B-it.jinja"
    if not path.is_file():
        pytest.skip("needs ../shared")
    args = {"city": "Paris", "days": 3, "hours": [9, 12], "metric": False,
            "nested": {"a": [1, "two"], "b": "x, y"}}  # the template sorts keys
    msgs = [{"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": "",
             "tool_calls": [{"type": "function", "function": {"name": "get_weather",
                                                              "arguments": args}}]}]
    rendered = ChatTemplate(path.read_text()).render(msgs, add_generation_prompt=False)
    reply = rendered[rendered.index("<|tool_call>"):]
    check("gemma4", reply, tool_calls=[call("get_weather", args)])


# -- GPT-OSS (harmony) -----------------------------------------------------------------------------

def test_harmony_analysis_then_final():
    text = ("<|channel|>analysis<|message|>User says hi. Respond briefly.<|end|>"
            "<|start|>assistant<|channel|>final<|message|>Hi there! 😊<|return|>")
    check("gpt-oss", text, reasoning="User says hi. Respond briefly.", content="Hi there! 😊",
          prompt="<|start|>user<|message|>hi<|end|><|start|>assistant")
    check("gpt-oss", text, reasoning="User says hi. Respond briefly.", content="Hi there! 😊")


def test_harmony_tool_call_in_role_header():
    text = ("<|channel|>analysis<|message|>Need the weather tool.<|end|>"
            "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>"
            "{\"city\":\"Tokyo\"}<|call|>")
    check("gpt-oss", text, reasoning="Need the weather tool.",
          tool_calls=[call("get_weather", '{"city":"Tokyo"}')])
    # <|call|> is end-of-generation: usually absent from the text
    check("gpt-oss", text.removesuffix("<|call|>"), reasoning="Need the weather tool.",
          tool_calls=[call("get_weather", '{"city":"Tokyo"}')])


def test_harmony_tool_call_in_channel_header_and_preamble():
    text = ("<|channel|>commentary<|message|>Checking two things.<|end|>"
            "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
            "<|message|>{\"city\": \"Oslo\"}<|call|>")
    check("gpt-oss", text, content="Checking two things.",
          tool_calls=[call("get_weather", '{"city": "Oslo"}')])


def test_harmony_prompt_already_in_analysis():
    check("gpt-oss", "still thinking<|end|><|start|>assistant<|channel|>final<|message|>Done",
          reasoning="still thinking", content="Done",
          prompt="<|start|>assistant<|channel|>analysis<|message|>")


def test_harmony_plain_text_without_headers_is_content():
    check("gpt-oss", "Just text, no channels.", content="Just text, no channels.")
    long_text = "word " * 200
    check("gpt-oss", long_text + "<|message|>x", content=long_text + "<|message|>x")


def test_harmony_tool_call_round_trip_through_real_template():
    path = TEMPLATES / "openai-gpt-oss-120b.jinja"
    if not path.is_file():
        pytest.skip("needs ../shared")
    args = {"city": "Zürich", "days": 2}
    msgs = [{"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"type": "function", "function": {"name": "get_weather", "arguments": args}}]},
            {"role": "tool", "content": "sunny"}]
    rendered = ChatTemplate(path.read_text()).render(msgs, tools=TOOLS)
    start = rendered.index("<|start|>assistant to=")
    reply = rendered[start + len("<|start|>assistant"):rendered.index("<|call|>") + len("<|call|>")]
    check("gpt-oss", reply, tool_calls=[call("get_weather", json.dumps(args, ensure_ascii=False))])


# -- Llama 3 and plain -----------------------------------------------------------------------------

def test_llama3_json_tool_call_only_with_tools():
    text = '{"name": "get_weather", "parameters": {"city": "Berlin"}}<|eot_id|>'
    check("llama", text, tool_calls=[call("get_weather", {"city": "Berlin"})], tools=TOOLS)
    check("llama", text, content='{"name": "get_weather", "parameters": {"city": "Berlin"}}')
    check("llama", "The answer is {x}.<|eot_id|>", content="The answer is {x}.", tools=TOOLS)
    check("llama", '{"not": "a call"}', content='{"not": "a call"}', tools=TOOLS)


def test_llama3_python_tag_builtin_call():
    check("llama3", '<|python_tag|>brave_search.call(query="weather in SF")<|eom_id|>',
          tool_calls=[call("brave_search", {"query": "weather in SF"})], tools=TOOLS)


def test_plain_family_and_unknown_arch():
    assert family_of("gemma3") == "plain" and family_of("mamba") == "plain"
    check("gemma3", "  Hello <world>!<end_of_turn>  ", content="Hello <world>!<end_of_turn>")
    check("mamba", "<think>hidden</think>shown", reasoning="hidden", content="shown")


def test_family_aliases():
    assert family_of("qwen3moe") == "qwen3"
    assert family_of("qwen35moe") == "qwen35"
    assert family_of("gpt-oss") == "gpt-oss" and family_of("harmony") == "gpt-oss"
    assert family_of("llama") == "llama3"


# -- streaming guarantees --------------------------------------------------------------------------

def test_partial_tags_are_held_back():
    p = parser_for("qwen3", id_prefix="c")
    assert p.feed("Hello <thi") == [Delta(content="Hello")]
    assert p.feed("s is fine") == [Delta(content=" <this is fine")]
    p = parser_for("qwen35", id_prefix="c")
    assert p.feed("Reason</th") == [Delta(reasoning="Reason")]
    assert p.feed("ink>\n\nAnswer <tool_") == [Delta(content="Answer")]
    assert p.feed("call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n") == []
    assert p.feed("</tool_call>") == [Delta(tool_call=call("f", {"a": "1"}, 0) | {"id": "c0"})]
    assert p.finish() == []
    p = parser_for("gpt-oss", id_prefix="c")
    assert p.feed("<|channel|>final<|message|>Hi<|en") == [Delta(content="Hi")]
    assert p.finish() == [Delta(content="<|en")]


def test_feed_after_finish_is_an_error():
    p = parser_for("qwen3")
    p.finish()
    with pytest.raises(RuntimeError):
        p.feed("x")


def test_default_ids_are_unique_and_to_message():
    out = parse("<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>"
                "<tool_call>\n{\"name\": \"g\", \"arguments\": {}}\n</tool_call>", "qwen3")
    ids = [c["id"] for c in out.tool_calls]
    assert len(set(ids)) == 2 and all(i.startswith("call_") for i in ids)
    msg = out.to_message()
    assert msg["role"] == "assistant" and msg["content"] == "" and len(msg["tool_calls"]) == 2
    assert "reasoning_content" not in msg


FUZZ_PIECES = {
    "qwen3": ["<think>", "</think>", "<tool_call>", "</tool_call>", "<|im_end|>", "<thi", "</",
              '{"name": "get_weather", "arguments": {"city": "A"}}',
              "<function=get_weather>", "<parameter=city>\nB\n</parameter>", "</function>"],
    "qwen35": ["</think>", "<tool_call>\n", "\n</tool_call>", "<function=get_weather>\n",
               "<parameter=days>\n4\n</parameter>\n", "</function>", "<think>", "<tool"],
    "gemma4": ["<|channel>thought\n", "<|channel>", "<channel|>", "<|tool_call>", "<tool_call|>",
               'call:get_weather{city:<|"|>X<|"|>}', "<turn|>", "<|turn>model\n", "<|"],
    "gpt-oss": ["<|start|>assistant", "<|channel|>analysis", "<|channel|>final", "<|message|>",
                "<|end|>", "<|call|>", "<|return|>", " to=functions.get_weather", '{"a": 1}',
                "<|channel|>commentary", "<|"],
    "llama3": ["<|python_tag|>", "<|eot_id|>", '{"name": "get_weather", "parameters": {}}',
               "<think>", "</think>", "<|"],
}


@pytest.mark.parametrize("family", sorted(FUZZ_PIECES))
def test_fuzz_split_invariance(family):
    import random

    rng = random.Random(1234)
    words = ["hi", " ", "\n", "x y", "<", ">", "|", "{", "}", "ü"]
    for _ in range(25):
        pieces = FUZZ_PIECES[family] + words
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        opts = {"id_prefix": "c", "tools": TOOLS if rng.random() < 0.5 else None}
        expected = parse(text, family, **opts)
        for i in range(len(text) + 1):
            p = parser_for(family, **opts)
            got = collect(p.feed(text[:i]) + p.feed(text[i:]) + p.finish())
            assert got == expected, (text, i)
