"""What `zinc run` does with a loaded model: one streamed completion, or an interactive session.

`run_once(model, prompt, params, chat=...)` streams the reply to `out` (stdout) as it is generated
and writes a one-line timing summary to `err` (stderr). In chat mode the prompt goes through the
model's chat template; the reply's content is streamed to `out`, its reasoning to `err`, tool calls
as JSON lines to `out`. `repl(...)` reads prompts line by line (a chat conversation that keeps its
history, or independent completions) until EOF or ``/exit``. Ctrl-C stops the current reply.
Nothing here reads the environment or parses arguments: `zinc.cli` does that.
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from zinc.engine.engine import GenerationResult
from zinc.engine.generate import ChatResult, engine_for, render_chat, chat_template
from zinc.engine.sampler import SamplingParams
from zinc.tokenizer.parsing import parser_for

REPL_HELP = "commands: /exit (or EOF) to quit, /reset to forget the conversation, /help"


def summary_line(result: GenerationResult | ChatResult) -> str:
    """``zinc: prompt N tok in ... (tok/s), generated M tok in ... (tok/s), first token after ...; finish X``"""
    return f"zinc: {result.stats.summary()}; finish {result.finish_reason}"


def _stream_plain(model: Any, ids: list[int], params: SamplingParams, out: TextIO) -> GenerationResult:
    handle = engine_for(model).submit(ids, params)
    try:
        for chunk in handle.text_chunks():
            out.write(chunk)
            out.flush()
    except KeyboardInterrupt:
        handle.cancel()
    return handle.result()


def _stream_chat(model: Any, messages: list[dict], params: SamplingParams, out: TextIO,
                 err: TextIO) -> ChatResult:
    from zinc.engine.generate import ChatStream

    prompt, ids = render_chat(model, messages)
    parser = parser_for(chat_template(model).output_family, prompt=prompt)
    stream = ChatStream(engine_for(model).submit(ids, params, decode_special=True), parser, prompt)
    in_reasoning = False
    try:
        for d in stream:
            if d.reasoning:
                if not in_reasoning:
                    err.write("[thinking] ")
                    in_reasoning = True
                err.write(d.reasoning)
                err.flush()
            if d.content:
                if in_reasoning:
                    err.write("\n")
                    in_reasoning = False
                out.write(d.content)
                out.flush()
            if d.tool_call is not None:
                out.write(("\n" if in_reasoning else "") + json.dumps(d.tool_call) + "\n")
                out.flush()
    except KeyboardInterrupt:
        stream.close()
    return stream.result


def run_once(model: Any, prompt: str, params: SamplingParams, *, chat: bool = False,
             system: str | None = None, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> GenerationResult | ChatResult:
    """Stream one reply to `prompt`; the summary goes to `err`. Returns the result."""
    if chat:
        messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
        result: GenerationResult | ChatResult = _stream_chat(model, messages, params, out, err)
        text = result.content
    else:
        result = _stream_plain(model, model.tokenize(prompt, add_special=True), params, out)
        text = result.text
    if text and not text.endswith("\n"):
        out.write("\n")
    out.flush()
    print(summary_line(result), file=err, flush=True)
    return result


def _read(inp: TextIO, err: TextIO, interactive: bool) -> str | None:
    if interactive:
        err.write("> ")
        err.flush()
    try:
        line = inp.readline()
    except KeyboardInterrupt:
        err.write("\n")
        return None
    return None if line == "" else line.rstrip("\n")


def repl(model: Any, params: SamplingParams, *, chat: bool = True, system: str | None = None,
         inp: TextIO = sys.stdin, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Read prompts until EOF or /exit; a chat keeps the conversation. Returns the exit status."""
    interactive = inp.isatty()
    if interactive:
        mode = "chat" if chat else "completion"
        print(f"zinc: {model.path.name}, {mode} mode; {REPL_HELP}", file=err)
    history: list[dict] = [{"role": "system", "content": system}] if system else []
    base = len(history)
    while (line := _read(inp, err, interactive)) is not None:
        cmd = line.strip()
        if cmd in ("/exit", "/quit", "/bye"):
            break
        if cmd == "/help":
            print(REPL_HELP, file=err)
            continue
        if cmd == "/reset":
            del history[base:]
            print("zinc: conversation cleared", file=err)
            continue
        if not cmd:
            continue
        try:
            if chat:
                history.append({"role": "user", "content": line})
                result = _stream_chat(model, history, params, out, err)
                history.append({"role": "assistant", "content": result.content})
                text = result.content
            else:
                result = _stream_plain(model, model.tokenize(line, add_special=True), params, out)
                text = result.text
        except ValueError as e:  # e.g. the conversation no longer fits the context
            if chat:
                history.pop()
            print(f"zinc: error: {e} (/reset starts over)", file=err)
            continue
        if text and not text.endswith("\n"):
            out.write("\n")
        out.flush()
        print(summary_line(result), file=err, flush=True)
    return 0
