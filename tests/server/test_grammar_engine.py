"""GrammarEngine and the engine's greedy chunks: a constrained greedy request is decoded one masked step at a time."""

from __future__ import annotations

import dataclasses

from zinc.engine.sampler import SamplingParams
from zinc.server import grammar


def test_constrained_greedy_is_not_chunked(tiny_model):
    fmt = {"type": "json_schema", "json_schema": {"name": "s", "schema": {"const": "hello world"}}}
    src = grammar.grammar_for_response_format(fmt)
    base = SamplingParams.greedy(max_tokens=20)
    fields = {f.name: getattr(base, f.name) for f in dataclasses.fields(base)}
    params = grammar.ConstrainedParams(**fields, constraint=grammar.Constraint.create(tiny_model, src))
    assert base.is_plain_greedy and not params.is_plain_greedy
    eng = grammar.GrammarEngine(tiny_model, max_running=1, greedy_chunk=8)  # as on a device-side greedy backend
    try:
        free = eng.submit(tiny_model.tokenize("Say it:"), base).result()
        got = eng.submit(tiny_model.tokenize("Say it:"), params).result()
    finally:
        eng.shutdown()
    assert got.text == '"hello world"' and free.text != got.text
