"""Prefill then token-by-token decode through the KV cache equals one prefill of all tokens."""

from __future__ import annotations

import numpy as np
import pytest

import zinc.api

PRESETS = ["llama3-tiny", "qwen3-tiny", "qwen3moe-tiny", "gemma3-tiny"]


def _stepwise(m, ids, n_prefill):
    cache = m.new_cache()
    rows = [m.forward(ids[:n_prefill], cache)]
    rows += [m.forward([t], cache) for t in ids[n_prefill:]]
    assert cache.n_past == len(ids)
    return np.concatenate(rows)


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("ftype", ["F32", "Q4_K_M"])
def test_decode_equals_prefill(preset, ftype, tiny, prompt):
    # exact GELU: the f16 GELU table is discontinuous, so float noise of 1e-7 can move a value by 1e-3
    m = zinc.api.load(tiny(preset, ftype, by="synth"), n_ctx=128, gelu="exact")
    ids = prompt(m.n_vocab, 48, seed=1)
    full = m.logits(ids)
    step = _stepwise(m, ids, 9)
    np.testing.assert_allclose(step, full, rtol=0, atol=2e-5 * np.abs(full).max())
    assert (step.argmax(-1) == full.argmax(-1)).all()


def test_gemma3_past_sliding_window_with_ring_cache(tiny, prompt):
    """Window 16, ubatch 8: the sliding layers keep a 23-cell ring that wraps several times."""
    path = tiny("gemma3-tiny", "F32")
    m = zinc.api.load(path, n_ctx=128, n_ubatch=8, gelu="exact")
    cache = m.new_cache()
    sizes = {lk.size for lk in cache.layers}
    assert sizes == {128, 16 + 8 - 1}
    ids = prompt(m.n_vocab, 70, seed=2)
    big = zinc.api.load(path, n_ctx=128, n_ubatch=128, gelu="exact")
    full = big.logits(ids)  # one ubatch, full-size caches for every layer
    chunked = m.logits(ids)  # 9 ubatches through the rings
    step = _stepwise(m, ids, 5)
    tol = 2e-5 * np.abs(full).max()
    np.testing.assert_allclose(chunked, full, rtol=0, atol=tol)
    np.testing.assert_allclose(step, full, rtol=0, atol=tol)


def test_sliding_window_changes_results_past_the_window(tiny, prompt):
    """Sanity: positions inside the first window do not depend on the window, later ones do."""
    from dataclasses import replace

    m = zinc.api.load(tiny("gemma3-tiny", "F32"), n_ctx=128, gelu="exact")
    ids = prompt(m.n_vocab, 40, seed=3)
    a = m.logits(ids)
    m.config = replace(m.config, n_swa=10**6)  # same rope per layer kind, no window
    b = m.logits(ids)
    np.testing.assert_allclose(a[:16], b[:16], rtol=0, atol=1e-5)
    assert np.abs(a[16:] - b[16:]).max() > 1e-3


def test_gelu_table_decode_close(tiny, prompt):
    m = zinc.api.load(tiny("gemma3-tiny", "F32"), n_ctx=128)
    ids = prompt(m.n_vocab, 32, seed=4)
    full = m.logits(ids)
    np.testing.assert_allclose(_stepwise(m, ids, 4), full, rtol=0, atol=5e-3)
