"""The KV cache: sizes per layer kind, cell indices of a step, guards, reset and truncate."""

from __future__ import annotations

import numpy as np
import pytest

from zinc.backends.cpu import CpuOps
from zinc.engine.cache import KVCache, LayerCacheSpec
from zinc.errors import ZincError

LAYOUT = [LayerCacheSpec(2, 8, 8, window=4), LayerCacheSpec(2, 8, 8), LayerCacheSpec(1, 16, 8, window=4)]


def test_sizes_and_slots():
    c = KVCache(CpuOps(), LAYOUT, n_ctx=64, n_ubatch=3)
    assert [lk.size for lk in c.layers] == [6, 64, 6]
    assert c.layers[2].k.shape == (6, 1, 16) and c.layers[2].v.shape == (6, 1, 8)
    assert c.nbytes == 4 * (6 * 2 * 16 + 64 * 2 * 16 + 6 * 24)
    c.begin(np.arange(0, 3))
    assert list(c.layers[0].slots) == [0, 1, 2] and c.layers[0].n_kv == 3
    c.end()
    for p in range(3, 9):
        c.begin(np.array([p]))
        c.end()
    c.begin(np.arange(9, 12))
    assert list(c.layers[0].slots) == [3, 4, 5] and c.layers[0].n_kv == 6
    assert list(c.layers[1].slots) == [9, 10, 11] and c.layers[1].n_kv == 12
    assert c.layers[0].slots is c.layers[2].slots  # shared per ring size


def test_guards():
    c = KVCache(CpuOps(), LAYOUT, n_ctx=8, n_ubatch=4)
    with pytest.raises(ZincError, match="n_ubatch"):
        c.begin(np.arange(5))
    with pytest.raises(ZincError, match="continue"):
        c.begin(np.arange(1, 3))
    c.begin(np.arange(4)); c.end()
    c.begin(np.arange(4, 8)); c.end()
    with pytest.raises(ZincError, match="context is full"):
        c.begin(np.array([8]))


def test_reset_and_truncate():
    ops = CpuOps()
    c = KVCache(ops, [LayerCacheSpec(1, 4, 4)], n_ctx=16, n_ubatch=4)
    c.begin(np.arange(4))
    ops.kv_write(c.layers[0].k, c.layers[0].v, c.layers[0].pos, np.ones((4, 1, 4), np.float32),
                 np.ones((4, 1, 4), np.float32), np.arange(4, dtype=np.int32), c.layers[0].slots)
    c.end()
    c.truncate(2)
    assert c.n_past == 2 and list(c.layers[0].pos[:5]) == [0, 1, -1, -1, -1]
    c.reset()
    assert c.n_past == 0 and (c.layers[0].pos == -1).all()
    ring = KVCache(ops, [LayerCacheSpec(1, 4, 4, window=4)], n_ctx=64, n_ubatch=2)
    for p in range(12):
        ring.begin(np.array([p])); ring.end()
    with pytest.raises(ZincError, match="overwritten"):
        ring.truncate(2)
    ring.truncate(11)
