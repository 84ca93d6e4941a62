"""The cache with recurrent (Gated DeltaNet) layers and storage-less (shared-KV) layers."""

from __future__ import annotations

import numpy as np
import pytest

import zinc.api
from zinc.backends.cpu import CpuOps
from zinc.engine.cache import KVCache, LayerCacheSpec, LayerKV, LayerState, RecurrentCacheSpec
from zinc.errors import ZincError

LAYOUT = [RecurrentCacheSpec(conv_channels=12, conv_kernel=4, n_head=2, head_dim=4),
          LayerCacheSpec(2, 8, 8), None, LayerCacheSpec(1, 8, 8, window=4)]


def test_layout_kinds_and_sizes():
    c = KVCache(CpuOps(), LAYOUT, n_ctx=32, n_ubatch=4)
    st, kv, none, ring = c.layers
    assert isinstance(st, LayerState) and isinstance(kv, LayerKV) and none is None and isinstance(ring, LayerKV)
    assert st.conv.shape == (3, 12) and st.ssm.shape == (2, 4, 4)
    assert st.conv.dtype == np.float32 and st.ssm.dtype == np.float32
    assert c.kv_layers == [kv, ring] and c.recurrent_layers == [st]
    assert c.nbytes == 4 * (32 * 2 * 16 + 7 * 1 * 16) + 4 * (3 * 12 + 2 * 16)
    c.begin(np.arange(3))
    assert list(kv.slots) == [0, 1, 2] and ring.n_kv == 3


def test_recurrent_state_stays_f32_with_f16_kv():
    c = KVCache(CpuOps(), LAYOUT, n_ctx=16, n_ubatch=4, dtype="f16")
    assert c.layers[1].k.dtype == np.float16 and c.layers[0].ssm.dtype == np.float32


def test_reset_zeroes_state_and_truncate_cannot_roll_back():
    c = KVCache(CpuOps(), LAYOUT, n_ctx=16, n_ubatch=4)
    c.begin(np.arange(4))
    c.layers[0].ssm[...] = 1.0
    c.layers[0].conv[...] = 2.0
    c.end()
    c.truncate(4)  # no-op
    assert c.n_past == 4 and c.layers[0].ssm.max() == 1.0
    with pytest.raises(ZincError, match="recurrent"):
        c.truncate(2)
    c.truncate(0)
    assert c.n_past == 0 and not c.layers[0].ssm.any() and not c.layers[0].conv.any()
    c.layers[0].ssm[...] = 3.0
    c.reset()
    assert not c.layers[0].ssm.any() and (c.layers[1].pos == -1).all()


def test_reset_keeps_the_state_buffers_where_ops_overwrite_in_place():
    """A backend whose captured decode steps hold the state's addresses (CUDA, here on CPU tensors)
    gets the same buffers back, zeroed: a new conversation does not make it capture the step again."""
    torch = pytest.importorskip("torch")
    from zinc.backends.cuda.ops import CudaOps

    c = KVCache(CudaOps(device="cpu", graphs=False), LAYOUT, n_ctx=16, n_ubatch=4)
    st = c.layers[0]
    conv, ssm = st.conv, st.ssm
    st.ssm.fill_(1.0)
    st.conv.fill_(2.0)
    c.reset()
    assert st.conv is conv and st.ssm is ssm
    assert torch.count_nonzero(st.ssm) == 0 and torch.count_nonzero(st.conv) == 0


def test_model_cache_layout_per_layer_kind(tiny):
    m = zinc.api.load(tiny("qwen35-tiny"), n_ctx=64)
    cache = m.new_cache()
    kinds = ["state" if isinstance(lk, LayerState) else "kv" for lk in cache.layers]
    assert kinds == ["state", "state", "state", "kv"] * 2
    p = m.config
    assert cache.layers[0].ssm.shape == (p.ssm_v_heads, p.ssm_state, p.ssm_state)
    assert cache.layers[0].conv.shape == (p.ssm_conv_kernel - 1, (2 * p.ssm_k_heads + p.ssm_v_heads) * p.ssm_state)


def test_logits_twice_gives_the_same_result(tiny, prompt):
    """logits() resets the recurrent state between calls (a stale state would change the second call)."""
    m = zinc.api.load(tiny("qwen35-tiny"), n_ctx=64)
    ids = prompt(m.n_vocab, 20, seed=5)
    np.testing.assert_array_equal(m.logits(ids), m.logits(ids))
