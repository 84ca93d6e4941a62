"""The one-token matvec of float weights kept dense (F32, F16, BF16: MoE routers, shared-expert gates)
on the CUDA backend (`matvec_generic.dense_matvec`, used by `CudaOps.matmul` up to MATVEC_MAX_ROWS
rows) against the NumPy backend, on fresh random inputs at odd shapes.

Without a GPU the kernel runs in Triton's interpreter (TRITON_INTERPRET=1, set before Triton is
imported) on CPU tensors; with one it runs on it. The tests skip when torch or triton is missing.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from zinc.backends.base import QTensor
from zinc.backends.cpu import CpuOps
from zinc.gguf.constants import GGMLType
from zinc.testing.compare import rel_err as rel


@pytest.fixture(scope="module")
def kgm():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")
    pytest.importorskip("triton")
    from zinc.backends.cuda.kernels import matvec_generic

    return matvec_generic


@pytest.fixture(scope="module")
def ops(kgm):
    import torch

    from zinc.backends.cuda.ops import CudaOps

    return CudaOps(device="cuda" if torch.cuda.is_available() else "cpu", graphs=False)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("t, n, k, bn, bk", [(1, 1, 40, 2, 512), (1, 257, 520, 2, 128), (3, 33, 1000, 4, 256),
                                             (2, 5, 17, 1, 16)])
def test_dense_matvec(kgm, ops, dtype, t, n, k, bn, bk):
    import torch

    rng = np.random.default_rng(n * 1000 + k + t)
    x = rng.standard_normal((t, k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    wt = torch.from_numpy(w).to(ops.device, getattr(torch, dtype))
    out = torch.full((t, n), float("nan"), device=ops.device)
    kgm.dense_matvec(torch.from_numpy(x).to(ops.device), wt, out, bn=bn, bk=bk)
    want = x.astype(np.float64) @ wt.float().cpu().numpy().astype(np.float64).T
    assert rel(out.cpu().numpy(), want) < 1e-5


@pytest.mark.parametrize("gtype", [GGMLType.F32, GGMLType.F16])
@pytest.mark.parametrize("t", [1, 4, 5])
def test_matmul_dense_weight(ops, gtype, t):
    """Through the op (one-token rows take the kernel, five rows cuBLAS) against the NumPy backend."""
    rng = np.random.default_rng(7 + t)
    n, k = 129, 96
    w = rng.standard_normal((n, k)).astype(np.float32 if gtype == GGMLType.F32 else np.float16)
    qt = QTensor("blk.0.ffn_gate_inp.weight", gtype, (n, k), w.reshape(-1).view(np.uint8))
    x = rng.standard_normal((t, k)).astype(np.float32)
    ref = CpuOps()
    want = ref.to_numpy(ref.matmul(ref.from_numpy(x), ref.upload(qt)))
    got = ops.to_numpy(ops.matmul(ops.from_numpy(x), ops.upload(qt)))
    assert got.shape == (t, n)
    assert rel(got, want) < (1e-5 if gtype == GGMLType.F32 or t <= 4 else 2e-3)
