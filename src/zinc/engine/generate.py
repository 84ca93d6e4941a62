"""`Model.generate` and `Model.chat`: text in, text out, on the model's own `Engine`.

    r = m.generate("The capital of France is", max_tokens=16, temperature=0)
    r.text, r.finish_reason, r.usage.completion_tokens, r.stats.decode_tok_s
    for chunk in (s := m.generate("Once", max_tokens=32, stream=True)): print(chunk, end="")
    s.finish_reason, s.usage                        # once the stream is exhausted
    c = m.chat([{"role": "user", "content": "Hi"}], max_tokens=64)
    c.content, c.reasoning_content, c.tool_calls, c.message

Each model gets one engine (`engine_for(model)`), driven by whichever thread waits on a result, so
calls from several threads share the model step by step. `chat` renders the GGUF's chat template
(`ChatTemplate.from_metadata`; a leading BOS text is dropped when the tokenizer adds BOS itself),
tokenizes with special tokens parsed, generates with control tokens rendered (so the reply's
markers reach the parser) and splits the reply into reasoning, content and tool calls with
`parser_for(template.output_family)`. A stream abandoned before its end is cancelled when closed
or garbage-collected.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Sequence

from zinc.engine.engine import Engine, GenerationResult, RequestHandle, RequestStats, Usage
from zinc.engine.sampler import SamplingParams
from zinc.tokenizer.parsing import Delta, OutputParser, ParsedOutput, collect, parser_for

_ENGINES: "weakref.WeakKeyDictionary[Any, Engine]" = weakref.WeakKeyDictionary()
_TEMPLATES: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()
DEFAULT_MAX_TOKENS = 256


def engine_for(model: Any, max_running: int = 4) -> Engine:
    """The model's shared engine (created on first use, without a thread)."""
    with _LOCK:
        eng = _ENGINES.get(model)
        if eng is None:
            eng = _ENGINES[model] = Engine(model, max_running=max_running)
        return eng


def sampling_params(*, max_tokens: int | None = DEFAULT_MAX_TOKENS, temperature: float = 0.8,
                    top_p: float = 0.95, top_k: int = 40, min_p: float = 0.05, seed: int | None = None,
                    stop: str | Sequence[str] | None = None, repeat_penalty: float = 1.0,
                    presence_penalty: float = 0.0, frequency_penalty: float = 0.0, penalty_last_n: int = 64,
                    logit_bias: Mapping[int, float] | None = None, logprobs: bool = False,
                    top_logprobs: int = 0, ignore_eos: bool = False,
                    repetition_penalty: float | None = None) -> SamplingParams:
    """SamplingParams from keyword arguments (``repetition_penalty`` is an alias of ``repeat_penalty``)."""
    return SamplingParams(
        temperature=temperature, top_k=top_k, top_p=top_p, min_p=min_p,
        repeat_penalty=repeat_penalty if repetition_penalty is None else repetition_penalty,
        presence_penalty=presence_penalty, frequency_penalty=frequency_penalty,
        penalty_last_n=penalty_last_n, logit_bias=logit_bias or (), seed=seed, max_tokens=max_tokens,
        stop=stop or (), ignore_eos=ignore_eos, logprobs=logprobs or top_logprobs > 0,
        top_logprobs=top_logprobs)


class _Stream:
    """What both streams share: `.usage`, `.finish_reason`, and cancel-on-close (also on garbage collection)."""

    handle: RequestHandle

    @property
    def result(self) -> Any:
        raise NotImplementedError

    @property
    def usage(self) -> Usage:
        return self.result.usage

    @property
    def finish_reason(self) -> str:
        return self.result.finish_reason

    def close(self) -> None:
        """Cancel the request if it is still running."""
        if not self.handle.done:
            self.handle.cancel()

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - never raise from a finalizer
            pass


class TextStream(_Stream):
    """Text chunks of one request as they come; afterwards `.result`, `.usage`, `.finish_reason`."""

    def __init__(self, handle: RequestHandle) -> None:
        self.handle = handle
        self._chunks = handle.text_chunks()

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        return next(self._chunks)

    @property
    def result(self) -> GenerationResult:
        """The whole result (waits for the end: the chunks not read yet are skipped)."""
        return self.handle.result()

    @property
    def text(self) -> str:
        return self.result.text

    @property
    def stats(self) -> RequestStats:
        return self.result.stats


def _prompt_ids(model: Any, prompt: str | Sequence[int], add_special: bool, parse_special: bool) -> list[int]:
    if isinstance(prompt, str):
        return model.tokenize(prompt, add_special=add_special, parse_special=parse_special)
    return [int(t) for t in prompt]


def generate(model: Any, prompt: str | Sequence[int], *, stream: bool = False, add_special: bool = True,
             parse_special: bool = False, **sampling: Any) -> GenerationResult | TextStream:
    """Complete `prompt` (text, or token ids used as they are).

    Sampling keywords: see `sampling_params` (``max_tokens`` default 256, None: until an
    end-of-generation token or the context is full; ``temperature=0``: greedy). Returns a
    `GenerationResult` (``.text``, ``.usage``, ``.finish_reason``, ``.stats``) or, with
    ``stream=True``, a `TextStream` of text chunks.
    """
    params = sampling_params(**sampling)
    ids = _prompt_ids(model, prompt, add_special, parse_special)
    handle = engine_for(model).submit(ids, params)
    return TextStream(handle) if stream else handle.result()


# -- chat -------------------------------------------------------------------------------------------

def chat_template(model: Any) -> Any:
    """The model's `ChatTemplate` (from its GGUF metadata; cached)."""
    from zinc.tokenizer.chat_template import ChatTemplate

    with _LOCK:
        tmpl = _TEMPLATES.get(model)
    if tmpl is None:
        tmpl = ChatTemplate.from_metadata(model.metadata, model.config.arch)
        with _LOCK:
            _TEMPLATES[model] = tmpl
    return tmpl


def render_chat(model: Any, messages: list[dict], tools: list[dict] | None = None,
                **template_kwargs: Any) -> tuple[str, list[int]]:
    """The chat prompt text and its token ids (special tokens parsed, BOS added once)."""
    tmpl = chat_template(model)
    text = tmpl.render(messages, add_generation_prompt=True, tools=tools, **template_kwargs)
    tok = model.tokenizer
    if tok.add_bos and tmpl.bos_token and text.startswith(tmpl.bos_token):
        text = text[len(tmpl.bos_token):]
    return text, model.tokenize(text, add_special=True, parse_special=True)


@dataclass
class ChatResult:
    """A chat reply: the parsed message, the raw text and the generation's usage and stats."""

    content: str
    reasoning_content: str
    tool_calls: list[dict]
    text: str  # the raw generated text (markers included)
    finish_reason: str  # stop | length | cancelled | tool_calls
    usage: Usage
    stats: RequestStats
    prompt: str = ""
    generation: GenerationResult | None = field(default=None, repr=False)

    @property
    def message(self) -> dict:
        """An OpenAI-style assistant message."""
        return ParsedOutput(self.reasoning_content, self.content, list(self.tool_calls)).to_message()

    def __str__(self) -> str:
        return self.content


def _chat_result(gen: GenerationResult, parsed: ParsedOutput, prompt: str) -> ChatResult:
    reason = "tool_calls" if parsed.tool_calls and gen.finish_reason == "stop" else gen.finish_reason
    return ChatResult(parsed.content, parsed.reasoning_content, parsed.tool_calls, gen.text, reason,
                      gen.usage, gen.stats, prompt, gen)


class ChatStream(_Stream):
    """`Delta`s (reasoning / content / one tool call) as they come; afterwards `.result` (a ChatResult)."""

    def __init__(self, handle: RequestHandle, parser: OutputParser, prompt: str) -> None:
        self.handle, self.parser, self.prompt = handle, parser, prompt
        self._deltas: list[Delta] = []
        self._it = self._run()
        self._result: ChatResult | None = None

    def _run(self) -> Iterator[Delta]:
        for chunk in self.handle.text_chunks():
            for d in self.parser.feed(chunk):
                self._deltas.append(d)
                yield d
        for d in self.parser.finish():
            self._deltas.append(d)
            yield d
        self._result = _chat_result(self.handle.result(), collect(self._deltas), self.prompt)

    def __iter__(self) -> Iterator[Delta]:
        return self

    def __next__(self) -> Delta:
        return next(self._it)

    @property
    def result(self) -> ChatResult:
        """The whole reply (reads the rest of the stream first)."""
        for _ in self._it:
            pass
        assert self._result is not None
        return self._result



def chat(model: Any, messages: list[dict], *, tools: list[dict] | None = None, stream: bool = False,
         chat_template_kwargs: dict | None = None, **sampling: Any) -> ChatResult | ChatStream:
    """Reply to OpenAI-style `messages` with the model's chat template.

    ``tools``: OpenAI tool definitions (passed to the template and the parser);
    ``chat_template_kwargs``: extra template variables (e.g. ``enable_thinking``); sampling
    keywords as in `generate`. Returns a `ChatResult`, or with ``stream=True`` a `ChatStream`.
    """
    params = sampling_params(**sampling)
    kwargs = dict(chat_template_kwargs or {})
    prompt, ids = render_chat(model, messages, tools, **kwargs)
    opts: dict[str, Any] = {"tools": tools, "prompt": prompt}
    if "enable_thinking" in kwargs:
        opts["enable_thinking"] = kwargs["enable_thinking"]
    parser = parser_for(chat_template(model).output_family, **opts)
    handle = engine_for(model).submit(ids, params, decode_special=True)
    s = ChatStream(handle, parser, prompt)
    return s if stream else s.result
