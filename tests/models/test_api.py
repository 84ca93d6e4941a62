"""The public API: zinc.api.load and the Model object."""

from __future__ import annotations

import numpy as np
import pytest

import zinc.api


@pytest.fixture(scope="module")
def model(tiny):
    return zinc.api.load(tiny("qwen3-tiny"), backend="cpu", n_ctx=256)


def test_logits_shape_dtype_and_chunking(tiny, prompt):
    m = zinc.api.load(tiny("qwen3-tiny"), n_ctx=256)
    ids = prompt(m.n_vocab, 40)
    out = m.logits(ids)
    assert out.shape == (40, m.n_vocab) and out.dtype == np.float32
    small = zinc.api.load(tiny("qwen3-tiny"), n_ctx=256, n_ubatch=7)
    np.testing.assert_allclose(small.logits(ids), out, rtol=0, atol=1e-5)
    np.testing.assert_array_equal(m.logits(ids), out)  # the reused cache starts empty each call
    cache = m.new_cache()
    last = m.forward(ids, cache, last_only=True)
    assert last.shape == (1, m.n_vocab)
    np.testing.assert_allclose(last[0], out[-1], rtol=0, atol=1e-5)


def test_metadata_config_repr(model):
    assert model.metadata["general.architecture"] == "qwen3"
    assert model.config.arch == "qwen3" and model.n_vocab == model.config.n_vocab
    assert "qwen3" in repr(model)


def test_bad_ids(model):
    with pytest.raises(ValueError, match="at least one"):
        model.logits([])
    with pytest.raises(ValueError, match="out of range"):
        model.logits([0, model.n_vocab])


def test_tokenize_roundtrip(model):
    ids = model.tokenize("hello world", add_special=True, parse_special=False)
    assert ids and all(0 <= i < model.n_vocab for i in ids)
    assert "hello world" in model.detokenize(ids)
    assert model.logits(ids).shape == (len(ids), model.n_vocab)
