"""`matmul_experts_glu` (the selected experts' gate and up products and the GLU) on the CUDA backend
against the NumPy backend's default composition (`BaseOps`: two `matmul_experts` and `glu`): one 8-bit
expert matvec for decode rows where both stacks share a type and shape, the composition otherwise (mixed
types, exact numerics, a prompt's rows). Fresh random stacks with odd row counts, repeated expert ids; Triton's interpreter without a GPU.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from zinc.backends.base import QTensor
from zinc.backends.cpu import CpuOps
from zinc.gguf.constants import GGMLType
from zinc.gguf.quants import random_blocks
from zinc.testing.compare import rel_err as rel


@pytest.fixture(scope="module")
def ops():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")
    pytest.importorskip("triton")
    from zinc.backends.cuda.ops import CudaOps

    return CudaOps(device="cuda" if torch.cuda.is_available() else "cpu", graphs=False)


@pytest.mark.parametrize("tg, tu, T, act, exact", [
    (GGMLType.Q4_K, GGMLType.Q4_K, 1, "silu", False), (GGMLType.Q8_0, GGMLType.Q8_0, 3, "gelu", False),
    (GGMLType.Q4_K, GGMLType.Q6_K, 1, "silu", False), (GGMLType.Q4_K, GGMLType.Q4_K, 2, "silu", True),
    (GGMLType.Q4_K, GGMLType.Q4_K, 6, "silu", False)])
def test_experts_glu(ops, monkeypatch, tg, tu, T, act, exact):
    from zinc.backends.cuda import ops as cuda_ops

    calls = []
    real = cuda_ops.mmvq.matvec_experts
    monkeypatch.setattr(cuda_ops.mmvq, "matvec_experts", lambda *a, **kw: calls.append(kw.get("glu")) or real(*a, **kw))
    rng = np.random.default_rng(T * 31 + int(tg) + int(tu))
    e, n, k, nsel = 5, 37, 256, 3
    ref = CpuOps()
    ws = [QTensor(f"w{i}", t, (e, n, k), random_blocks(t, e * n * k, rng, scale=0.05)) for i, t in enumerate((tg, tu))]
    x = rng.standard_normal((T, k)).astype(np.float32)
    ids = np.stack([rng.choice(e, nsel, replace=False) for _ in range(T)]).astype(np.int32)
    ids[0, -1] = ids[0, 0]
    want = ref.to_numpy(ref.matmul_experts_glu(ref.from_numpy(x), *(ref.upload(w) for w in ws), ref.from_numpy(ids),
                                               act))
    ops.exact = exact
    try:
        got = ops.to_numpy(ops.matmul_experts_glu(ops.from_numpy(x), *(ops.upload(w) for w in ws),
                                                  ops.from_numpy(ids), act))
    finally:
        ops.exact = False
    assert got.shape == (T, nsel, n)
    if tg == tu and not exact and T <= 4:  # decode rows: one kernel for gate, up and the GLU
        assert [c is not None for c in calls] == [True]
    else:  # the composition (a prompt's rows may take the per-expert GEMMs: no 8-bit matvec at all)
        assert not any(c is not None for c in calls)
    assert rel(got, want) < (1e-4 if exact else 3e-2)  # 8-bit activations: ~1e-2
