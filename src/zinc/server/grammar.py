"""Grammar-constrained decoding for `response_format` and forced tool calls, on llguidance.

    g = grammar_for_response_format({"type": "json_schema", "json_schema": {"schema": {...}}})
    c = Constraint.create(model, g)        # one per request; APIError(400) for an unsupported grammar
    params = ConstrainedParams(..., constraint=c)
    engine = GrammarEngine(model)          # an Engine that masks each request's logits by its constraint

Never fails open: a schema llguidance cannot compile is a 400 before anything runs, and a matcher
that enters an error state while decoding ends the request with an error instead of letting
unconstrained tokens through. The llguidance tokenizer (every token's bytes; control tokens marked
with a 0xFF prefix, as llguidance's llama.cpp adapter does) is built once per model.
"""

from __future__ import annotations

import json
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zinc.engine.engine import Engine
from zinc.engine.sampler import SamplingParams, TopLogits

_TOKENIZERS: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()
_COMPACT = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}


class GrammarError(ValueError):
    """A response_format / tool grammar that cannot be enforced (the server answers 400)."""


def available() -> bool:
    try:
        _llg()
    except GrammarError:
        return False
    return True


def _llg():
    try:
        import llguidance
    except ImportError:
        raise GrammarError("constrained decoding needs the llguidance package "
                           "(pip install llguidance; a default dependency of zinc-llm)") from None
    return llguidance


class _VocabAdapter:
    """What llguidance's TokenizerWrapper reads: token bytes, EOS, special ids and an encoder."""

    def __init__(self, tok: Any, n_vocab: int) -> None:
        from zinc.tokenizer.vocab import ATTR_CONTROL

        self._tok = tok
        self.tokens, self.special_token_ids = [], []
        for i in range(n_vocab):
            piece = tok.token_to_piece(i, special=True)
            if tok.token_attr(i) & ATTR_CONTROL:
                piece = b"\xff" + piece
                self.special_token_ids.append(i)
            self.tokens.append(piece)
        self.eos_token_id = tok.eos_id if tok.eos_id is not None else min(tok.eog_ids)
        self.bos_token_id = tok.bos_id

    def __call__(self, s: str | bytes) -> list[int]:
        text = s.decode("utf-8", "replace") if isinstance(s, bytes) else s
        return self._tok.encode(text, add_special=False, parse_special=False)


def lltokenizer(model: Any) -> Any:
    """The model's llguidance tokenizer (built on first use, then cached)."""
    llg = _llg()
    with _LOCK:
        cached = _TOKENIZERS.get(model)
        if cached is None:
            tok = model.tokenizer
            wrapper = llg.TokenizerWrapper(_VocabAdapter(tok, model.n_vocab))
            eos = sorted(tok.eog_ids) or [wrapper.eos_token_id]
            cached = _TOKENIZERS[model] = llg.LLTokenizer(wrapper, n_vocab=model.n_vocab, eos_token=eos)
        return cached


def grammar_for_response_format(rf: Any) -> str | None:
    """The llguidance grammar for an OpenAI `response_format`; None for text. GrammarError if bad."""
    if rf is None:
        return None
    if not isinstance(rf, dict) or not isinstance(rf.get("type"), str):
        raise GrammarError("response_format must be an object with a string 'type'")
    kind = rf["type"]
    if kind == "text":
        return None
    _llg()  # a clear error when llguidance is missing, before any schema work
    if kind == "json_object":
        return _schema_grammar({"type": "object"})
    if kind == "json_schema":
        spec = rf.get("json_schema")
        if not isinstance(spec, dict):
            raise GrammarError("response_format.json_schema must be an object")
        schema = spec.get("schema", {})
        if not isinstance(schema, dict):
            raise GrammarError("response_format.json_schema.schema must be an object")
        return _schema_grammar(schema)
    raise GrammarError(f"response_format.type {kind!r} is not supported (text, json_object, json_schema)")


def _schema_grammar(schema: dict) -> str:
    llg = _llg()
    try:
        return llg.LLMatcher.grammar_from_json_schema(schema, overrides=_COMPACT)
    except (ValueError, TypeError) as e:
        raise GrammarError(f"invalid JSON schema: {e}") from None


def grammar_for_tool_call(family: str, tools: list[dict], name: str | None) -> str:
    """A grammar forcing one tool call in the model's format (tool_choice required or named)."""
    if family not in ("qwen3", "qwen35", "qwen3-coder", "plain"):
        raise GrammarError(f"tool_choice 'required' / a named function is not supported for the "
                           f"{family!r} output format yet")
    funcs = [t["function"] for t in tools if t.get("type") == "function" and isinstance(t.get("function"), dict)]
    if name is not None:
        funcs = [f for f in funcs if f.get("name") == name]
        if not funcs:
            raise GrammarError(f"tool_choice names function {name!r}, which is not in tools")
    variants = []
    for f in funcs:
        params = dict(f.get("parameters") or {"type": "object"})
        if params.get("type") == "object" and "properties" in params:
            params.setdefault("additionalProperties", False)  # no invented arguments
        variants.append({"type": "object", "properties": {"name": {"const": f["name"]}, "arguments": params},
                         "required": ["name", "arguments"], "additionalProperties": False})
    schema = dict(variants[0]) if len(variants) == 1 else {"anyOf": variants}
    schema["x-guidance"] = _COMPACT
    lark = f'start: "<tool_call>\\n" call "\\n</tool_call>"\ncall: %json {json.dumps(schema)}\n'
    return _llg().LLMatcher.grammar_from_lark(lark)


class Constraint:
    """One request's grammar state: masks logits, then follows the sampled token."""

    def __init__(self, matcher: Any, n_vocab: int) -> None:
        self.matcher, self.n_vocab = matcher, n_vocab

    @classmethod
    def create(cls, model: Any, grammar: str) -> "Constraint":
        llg = _llg()
        tok = lltokenizer(model)
        err = llg.LLMatcher.validate_grammar(grammar, tok)
        if err and not err.startswith("WARNING"):
            raise GrammarError(f"unsupported schema or grammar: {err}")
        matcher = llg.LLMatcher(tok, grammar, log_level=0)
        if matcher.is_error():
            raise GrammarError(f"unsupported schema or grammar: {matcher.get_error()}")
        return cls(matcher, model.n_vocab)

    def allowed(self) -> np.ndarray:
        """A boolean mask over the vocabulary of the tokens the grammar allows now."""
        bits = np.frombuffer(self.matcher.compute_bitmask(), dtype=np.uint8)
        mask = np.unpackbits(bits, bitorder="little")[: self.n_vocab].astype(bool)
        if self.matcher.is_error():
            raise RuntimeError(f"grammar error: {self.matcher.get_error()}")
        return mask

    def apply(self, logits: np.ndarray) -> None:
        mask = self.allowed()
        if not mask.any():
            raise RuntimeError("the grammar allows no token (internal error)")
        logits[~mask[: logits.shape[-1]]] = -np.inf

    def consume(self, token: int) -> None:
        if not self.matcher.consume_token(int(token)) or self.matcher.is_error():
            raise RuntimeError(f"grammar rejected token {token}: {self.matcher.get_error()}")


@dataclass(frozen=True)
class ConstrainedParams(SamplingParams):
    """SamplingParams plus an optional grammar `Constraint` (state: one per request)."""

    constraint: Any = field(default=None, compare=False, hash=False)

    @property
    def is_plain_greedy(self) -> bool:
        """A constrained request is not (its logits are masked on the host each step), so the engine never
        decodes it in device-side greedy chunks."""
        return self.constraint is None and super().is_plain_greedy


class GrammarEngine(Engine):
    """An Engine that applies each request's grammar constraint before sampling."""

    def _sample(self, req: Any, row: Any) -> None:
        c = getattr(req.params, "constraint", None)
        if c is None:
            return super()._sample(req, row)
        row = np.array(row.full() if isinstance(row, TopLogits) else row, dtype=np.float32, copy=True)
        c.apply(row)  # (over the whole row: the grammar may allow only tokens outside the best ones)
        n_before = len(req.tokens)
        super()._sample(req, row)
        if len(req.tokens) > n_before and req.tokens[-1] not in req.checker.eog:
            c.consume(req.tokens[-1])
