"""The CUDA prefill flash-attention kernel (kernels/flash.py) against the NumPy backend's attention.

Runs in Triton's interpreter without a GPU (see test_cuda_kernels.py). Fresh random caches with
empty cells, odd head counts and dims, sliding windows, softcap, sinks, a wrapped ring cache.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")
pytest.importorskip("triton")

from zinc.backends.cpu import CpuOps  # noqa: E402
from zinc.backends.cuda.ops import CudaOps  # noqa: E402
from zinc.testing.compare import rel_err as rel  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@pytest.fixture(scope="module")
def ops():
    return CudaOps(device=DEVICE, graphs=False)


def _run(ops, q, k, v, q_pos, kv_pos, n_kv, **args):
    snk = args.pop("sinks", None)
    want = CpuOps().attention(q, k, v, q_pos, kv_pos, n_kv, 0.3, sinks=snk, **args)
    got = ops.attention(*(ops.from_numpy(a) for a in (q, k, v, q_pos, kv_pos)), n_kv, 0.3,
                        sinks=None if snk is None else ops.from_numpy(snk), **args)
    return ops.to_numpy(got), want


@pytest.mark.parametrize("T,Hq,Hkv,D,DV,start,window,softcap,sinks", [
    (17, 4, 2, 32, 32, 0, 0, 0.0, False),  # the smallest prefill, from position 0
    (37, 6, 2, 24, 24, 30, 0, 0.0, False),  # odd head dim (padded), continuing a sequence
    (70, 3, 3, 64, 48, 5, 9, 0.0, False),  # D != DV, sliding window, two query blocks
    (29, 8, 2, 40, 40, 11, 0, 25.0, True),  # softcap and sinks
    (19, 2, 1, 160, 160, 3, 6, 0.0, True),  # a wide head (the smaller tiles)
])
def test_prefill_attention(ops, T, Hq, Hkv, D, DV, start, window, softcap, sinks):
    rng = np.random.default_rng(T * 7 + D)
    S = start + T + 13  # empty cells past the sequence
    k = rng.standard_normal((S, Hkv, D)).astype(np.float16)
    v = rng.standard_normal((S, Hkv, DV)).astype(np.float16)
    kv_pos = np.full(S, -1, np.int32)
    kv_pos[:start + T] = np.arange(start + T)
    q = rng.standard_normal((T, Hq, D)).astype(np.float32)
    q_pos = np.arange(start, start + T, dtype=np.int32)
    snk = rng.standard_normal(Hq).astype(np.float32) * 2 if sinks else None
    got, want = _run(ops, q, k, v, q_pos, kv_pos, start + T, window=window, softcap=softcap, sinks=snk)
    assert got.shape == want.shape and rel(got, want) < 3e-3  # f16 operands, f32 accumulation


def test_prefill_attention_ring(ops):
    """A wrapped sliding-window ring: cells hold positions out of order; every cell is read."""
    rng = np.random.default_rng(11)
    S, T, start, window, Hq, Hkv, D = 40, 21, 50, 12, 4, 2, 32
    kv_pos = np.full(S, -1, np.int32)
    for p in range(start + T - S, start + T):  # the last S positions, cell p % S
        kv_pos[p % S] = p
    k = rng.standard_normal((S, Hkv, D)).astype(np.float16)
    v = rng.standard_normal((S, Hkv, D)).astype(np.float16)
    q = rng.standard_normal((T, Hq, D)).astype(np.float32)
    q_pos = np.arange(start, start + T, dtype=np.int32)
    got, want = _run(ops, q, k, v, q_pos, kv_pos, S, window=window)
    assert rel(got, want) < 3e-3


def test_prefill_attention_exact():
    """exact=True (f32 operands): as close to the NumPy backend as f32 rounding allows."""
    ops = CudaOps(device=DEVICE, graphs=False, exact=True)
    rng = np.random.default_rng(12)
    T, S, Hq, Hkv, D = 23, 40, 4, 2, 48
    k = rng.standard_normal((S, Hkv, D)).astype(np.float32)
    v = rng.standard_normal((S, Hkv, D)).astype(np.float32)
    kv_pos = np.full(S, -1, np.int32)
    kv_pos[:30] = np.arange(30)
    q = rng.standard_normal((T, Hq, D)).astype(np.float32)
    q_pos = np.arange(7, 30, dtype=np.int32)
    got, want = _run(ops, q, k, v, q_pos, kv_pos, 30, window=5, softcap=15.0)
    assert rel(got, want) < 1e-5
