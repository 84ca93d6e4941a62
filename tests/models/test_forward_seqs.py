"""Batched steps over several sequences (`Model.forward_seqs`): each sequence's logits equal those of the same
tokens run on its own cache, for every family (attention, sliding-window rings, recurrent state, shared-KV
layers, sinks, experts), for decode rows and for uneven chunks mixed with them; the caches end as they would.
Also the argument checks and `CacheGroup`'s."""

from __future__ import annotations

import numpy as np
import pytest

from zinc.api import load
from zinc.engine.cache import CacheGroup
from zinc.errors import ZincError
from zinc.synth import write_model

FAMILIES = ["qwen3-tiny", "qwen3moe-tiny", "llama3-tiny", "qwen35-tiny", "qwen35moe-tiny", "gemma3-tiny",
            "gemma4-tiny", "gemma4moe-tiny", "gpt-oss-tiny"]


@pytest.fixture(scope="module", params=FAMILIES)
def model(request, tmp_path_factory):
    path = write_model(tmp_path_factory.mktemp("m") / f"{request.param}.gguf", request.param, ftype="Q8_0").path
    m = load(path, n_ctx=96, n_ubatch=32)  # sliding windows of 16: rings of 16 + 32 - 1 cells, wrapped below
    yield m
    m.close()


def _prompts(model, seed: int, lengths: list[int]) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, model.n_vocab, n).tolist() for n in lengths]


def _close(got: np.ndarray, want: np.ndarray) -> None:
    """Equal but for float rounding: the matmuls of several rows may sum in another order than of one row."""
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= 1e-3 * max(1.0, float(np.abs(want).max()))


def test_decode_rows_match_each_sequence_alone(model):
    """Three sequences of different lengths (one past the sliding window) each decode 6 tokens together: every
    step's logits equal the sequence's own step's; argmax gives their argmax."""
    prompts = _prompts(model, 1, [5, 23, 60])
    solo = [model.new_cache() for _ in prompts]
    group = [model.new_cache() for _ in prompts]
    last = []
    for p, a, b in zip(prompts, solo, group):
        model.forward(p[:-1], a)
        model.forward(p[:-1], b)
        last.append(p[-1])
    for step in range(6):
        want = np.stack([model.forward([t], c, last_only=True)[-1] for t, c in zip(last, solo)])
        if step % 2:
            ids = model.forward_seqs([([t], c) for t, c in zip(last, group)], argmax=True)
            assert ids.tolist() == np.argmax(want, axis=1).tolist()
        else:
            _close(model.forward_seqs([([t], c) for t, c in zip(last, group)]), want)
        last = np.argmax(want, axis=1).tolist()
    assert [c.n_past for c in group] == [c.n_past for c in solo]


def test_uneven_chunks_with_decode_rows(model):
    """A prompt chunk of one sequence, a decode row of another and a longer chunk of a third in one step; then
    the sequences continue alone from the group's caches as from their own."""
    prompts = _prompts(model, 2, [9, 14, 20])
    solo = [model.new_cache() for _ in prompts]
    group = [model.new_cache() for _ in prompts]
    for c in (solo[1], group[1]):
        model.forward(prompts[1][:13], c)
    chunks = [prompts[0], prompts[1][13:], prompts[2]]
    want = np.stack([model.forward(ch, c, last_only=True)[-1] for ch, c in zip(chunks, solo)])
    _close(model.forward_seqs(list(zip(chunks, group))), want)
    nxt = [[int(t)] for t in np.argmax(want, axis=1)]
    for ch, a, b in zip(nxt, solo, group):
        _close(model.forward(ch, b, last_only=True), model.forward(ch, a, last_only=True))


def test_checks(model):
    a, b = model.new_cache(), model.new_cache()
    with pytest.raises(ValueError, match="at least one"):
        model.forward_seqs([])
    with pytest.raises(ValueError, match="once"):
        model.forward_seqs([([1], a), ([2], a)])
    with pytest.raises(ValueError, match="out of range"):
        model.forward_seqs([([1], a), ([model.n_vocab], b)])
    with pytest.raises(ZincError, match="n_ubatch"):
        model.forward_seqs([([1] * 20, a), ([2] * 20, b)])
    with pytest.raises(ValueError, match="one row count per cache"):
        CacheGroup(model.ops, [a, b], [1])
    assert a.n_past == b.n_past == 0
