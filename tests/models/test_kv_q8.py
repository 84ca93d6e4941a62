"""Models on a q8_0 KV cache (kv_dtype "q8_0", NumPy backend): decode through the quantized cells equals a
prefill through them, the logits stay near the f32 cache's, and they equal llama.cpp's q8_0 cache.

llama.cpp's CPU flash attention on q8_0 cells also rounds Q to q8_0 (its K.Q is an integer dot product), and it
rotates Q, K and V by a Hadamard matrix in front of a quantized cache unless told not to. The oracle test turns
the rotation off (OracleSettings.attn_rot) and rounds our Q the same way, so what remains to compare is the
cells: f32 cells are ~1e-5 away in mean KL, twenty times the bound and more.
"""

from __future__ import annotations

import numpy as np
import pytest

import zinc.api
from zinc.backends.base import Q8Cells
from zinc.backends.cpu.ops import CpuOps
from zinc.gguf.quants import q8_blocks

PRESETS = ["qwen3-tiny", "llama3-tiny", "gemma3-tiny"]


@pytest.mark.parametrize("preset", PRESETS)
def test_q8_0_cache_decode_equals_prefill_and_stays_close(preset, tiny, prompt, metrics):
    path = tiny(preset, "Q4_K_M", by="synth")
    m = zinc.api.load(path, n_ctx=128, gelu="exact", kv_dtype="q8_0")
    ids = prompt(m.n_vocab, 40, seed=3)
    full = m.logits(ids)
    cache = m.new_cache()
    assert isinstance(cache.kv_layers[0].k, Q8Cells) and cache.kv_layers[0].k.q.dtype == np.int8
    step = np.concatenate([m.forward(ids[:7], cache)] + [m.forward([t], cache) for t in ids[7:]])
    f32 = zinc.api.load(path, n_ctx=128, gelu="exact").logits(ids)
    t = metrics(f32, full)
    assert 0 < t["kl_mean"] <= 1e-4 and t["agree_clear"] == 1.0, t  # changed, by the cells' rounding only
    # a decode step's K and V differ from the prefill's by float noise, which moves a rare value across a
    # rounding boundary (one q8 step): far less than the whole rounding moves the logits
    assert np.abs(step - full).max() < 0.1 * np.abs(f32 - full).max()
    assert metrics(full, step)["kl_mean"] < 0.01 * t["kl_mean"]


@pytest.mark.oracle
@pytest.mark.parametrize("preset", ["qwen3-tiny", "gemma3-tiny"])
def test_q8_0_cache_matches_llama_cpp(preset, tiny, prompt, metrics, monkeypatch):
    from zinc.testing import oracle

    path = tiny(preset, "F32")
    ids = prompt(512, 64)
    ref, settings = oracle.logits(path, ids, kv_type="q8_0", flash_attn=True)
    assert not settings.attn_rot
    plain = metrics(ref, zinc.api.load(path, n_ctx=256).logits(ids))  # f32 cells
    attention = CpuOps.attention

    def q_as_llama_cpp(self, q, k, v, *args, **kw):  # its K.Q on q8_0 cells: Q rounded to q8_0 first
        if isinstance(k, Q8Cells):
            d, qq = q8_blocks(np.ascontiguousarray(q).reshape(-1, 32))
            q = (qq.astype(np.float32) * d.astype(np.float16).astype(np.float32)).reshape(q.shape)
        return attention(self, q, k, v, *args, **kw)

    monkeypatch.setattr(CpuOps, "attention", q_as_llama_cpp)
    t = metrics(ref, zinc.api.load(path, n_ctx=256, kv_dtype="q8_0").logits(ids))
    assert t["agree_clear"] == 1.0 and t["n_clear"] >= 8, t
    # qwen3-tiny 8e-10, gemma3-tiny 1.4e-7 (against 9.6e-6 on f32 cells): llama.cpp's own quantizer on x86
    # (1 / d as 127 / amax, ties to even) rounds a few values the other way
    assert t["kl_mean"] <= 5e-7 and plain["kl_mean"] > 20 * t["kl_mean"], (t, plain)
