"""Qwen3.5 / gpt-oss / Gemma 4: prefill then decode equals one prefill; chunked vs recurrent delta rule; speed.

The prompts are long enough to cross several delta-net chunks (64 tokens) and every sliding window
(16 tokens in the tiny models); small ubatches push the sliding layers through their ring caches and
carry the recurrent state across steps.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

import zinc.api
from zinc.backends.cpu import CpuOps

PRESETS = ["qwen35-tiny", "qwen35moe-tiny", "gpt-oss-tiny", "gemma4-tiny", "gemma4moe-tiny"]
HYBRID = ["qwen35-tiny", "qwen35moe-tiny"]


class RecurrentOnly(CpuOps):
    """The delta rule token by token even for a prompt (the default uses the chunked form)."""

    def gated_delta_net(self, q, k, v, g, beta, state):
        return self.delta_net_recurrent(q, k, v, g, beta, state)


def _stepwise(m, ids, n_prefill):
    cache = m.new_cache()
    rows = [m.forward(ids[:n_prefill], cache)]
    rows += [m.forward([t], cache) for t in ids[n_prefill:]]
    assert cache.n_past == len(ids)
    return np.concatenate(rows)


def _close(a, ref, rel=2e-5):
    np.testing.assert_allclose(a, ref, rtol=0, atol=rel * np.abs(ref).max())
    assert (a.argmax(-1) == ref.argmax(-1)).all()


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("ftype", ["F32", "Q4_K_M"])
def test_decode_equals_prefill(preset, ftype, tiny, prompt):
    """150 tokens at once (delta-net chunks 64+64+22) vs 130 (64+64+2) then 20 single-token steps."""
    m = zinc.api.load(tiny(preset, ftype, by="synth"), n_ctx=256, gelu="exact")
    ids = prompt(m.n_vocab, 150, seed=1)
    _close(_stepwise(m, ids, 130), m.logits(ids))


@pytest.mark.parametrize("preset", PRESETS)
def test_small_ubatches_and_ring_caches(preset, tiny, prompt):
    """Ubatches of 24: sliding layers keep a 39-cell ring that wraps; the recurrent state crosses steps."""
    path = tiny(preset, "F32")
    m = zinc.api.load(path, n_ctx=256, n_ubatch=24, gelu="exact")
    cache = m.new_cache()
    windows = {lk.window for lk in cache.kv_layers}
    if any(windows):
        assert {lk.size for lk in cache.kv_layers if lk.window} == {16 + 24 - 1}
    ids = prompt(m.n_vocab, 110, seed=2)
    full = zinc.api.load(path, n_ctx=256, n_ubatch=256, gelu="exact").logits(ids)
    _close(m.logits(ids), full)
    _close(_stepwise(m, ids, 80), full)


@pytest.mark.parametrize("preset", HYBRID)
def test_chunked_and_recurrent_forms_agree(preset, tiny, prompt):
    """Whole-model logits with the chunked delta rule vs the token-by-token one: 1e-5 relative."""
    path = tiny(preset, "F32")
    ids = prompt(zinc.api.load(path).n_vocab, 200, seed=3)
    chunked = zinc.api.load(path, n_ctx=256).logits(ids)
    recurrent = zinc.api.load(path, backend=RecurrentOnly(), n_ctx=256).logits(ids)
    assert np.abs(chunked - recurrent).max() <= 1e-5 * np.abs(recurrent).max()


def test_gemma4_gelu_table_decode_close(tiny, prompt):
    """With ggml's f16 GELU table (the default) decode stays close; the table is discontinuous at f16 steps."""
    m = zinc.api.load(tiny("gemma4-tiny", "F32"), n_ctx=128)
    ids = prompt(m.n_vocab, 40, seed=4)
    np.testing.assert_allclose(_stepwise(m, ids, 20), m.logits(ids), rtol=0, atol=5e-3)


def test_sliding_window_matters_past_the_window(tiny, prompt):
    from dataclasses import replace

    m = zinc.api.load(tiny("gpt-oss-tiny", "F32"), n_ctx=128)
    ids = prompt(m.n_vocab, 40, seed=5)
    a = m.logits(ids)
    m.config = replace(m.config, n_swa=10**6)
    b = m.logits(ids)
    np.testing.assert_allclose(a[:16], b[:16], rtol=0, atol=1e-6)
    assert np.abs(a[16:] - b[16:]).max() > 1e-3


@pytest.mark.parametrize("preset", PRESETS)
def test_300_token_prompt_speed(preset, tiny, prompt, timing_table):
    """A 300-token prompt on the NumPy backend (Q4_K_M weights), then 8 decode steps; times reported."""
    m = zinc.api.load(tiny(preset, "Q4_K_M", by="synth"), n_ctx=512)
    ids = prompt(m.n_vocab, 308, seed=6)
    m.logits(ids[:4])  # weights dequantized once, outside the timing
    cache = m.new_cache()
    t0 = time.perf_counter()
    m.forward(ids[:300], cache, last_only=True)
    t1 = time.perf_counter()
    for t in ids[300:]:
        m.forward([t], cache, last_only=True)
    t2 = time.perf_counter()
    timing_table(f"{preset:<16} 300-token prompt {t1 - t0:6.2f} s ({300 / (t1 - t0):6.0f} tok/s), "
                 f"decode {(t2 - t1) / 8 * 1e3:6.1f} ms/token")
    assert t1 - t0 < 30.0
