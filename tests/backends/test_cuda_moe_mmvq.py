"""The 8-bit-activation matvec over selected experts (`mmvq.matvec_experts`) against NumPy.

Fresh random expert stacks (odd row counts), activations and expert ids (repeats included); the
reference is float64 math on the kernel's own 8-bit activations (`quantize_x`), so the
kernel must agree to ~1e-6, and to the plain f32 product within the quantization's ~1e-2. Runs in
Triton's interpreter without a GPU.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")
pytest.importorskip("triton")

from zinc.backends.base import QTensor  # noqa: E402
from zinc.backends.cpu import CpuOps  # noqa: E402
from zinc.backends.cuda.kernels import mmvq  # noqa: E402
from zinc.backends.cuda.kernels.moe import expert_order  # noqa: E402
from zinc.backends.cuda.kernels.elementwise import GLU_ACTS  # noqa: E402
from zinc.backends.cuda.weights import CudaWeight  # noqa: E402
from zinc.gguf.constants import GGMLType  # noqa: E402
from zinc.gguf.quants import random_blocks  # noqa: E402
from zinc.testing.compare import rel_err as rel  # noqa: E402

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def stack(t: GGMLType, e: int, n: int, k: int, rng) -> tuple[CudaWeight, np.ndarray]:
    """A random (E, n, K) expert stack on the device and its dequantized values (float64)."""
    qt = QTensor("w", t, (e, n, k), random_blocks(t, e * n * k, rng, scale=0.05))
    return CudaWeight(qt, DEVICE), qt.dequantize().astype(np.float64).reshape(e, n, k)


def dequantized_x(x: np.ndarray) -> np.ndarray:
    """The activations (rows, K) as the kernel sees them: `quantize_x`'s bytes times its block scales
    (float64; test_cuda_mmvq checks `quantize_x` against NumPy)."""
    xq, xd, _ = mmvq.quantize_x(torch.from_numpy(x).to(DEVICE))
    q = xq.cpu().numpy().view(np.int8).astype(np.float64).reshape(x.shape[0], -1, 32)
    return (q * xd.cpu().numpy()[..., :1]).reshape(x.shape)


def random_ids(rng, t: int, nsel: int, e: int) -> np.ndarray:
    """(T, NSEL) int32 expert ids: distinct per token, except a repeated id in the first row."""
    ids = np.stack([rng.choice(e, nsel, replace=False) for _ in range(t)]).astype(np.int32)
    if nsel > 1:
        ids[0, -1] = ids[0, 0]
    return ids


def run(xs: np.ndarray, w: CudaWeight, t: GGMLType, n: int, k: int, ids: np.ndarray, **kw) -> np.ndarray:
    xqt = mmvq.quantize_x(torch.from_numpy(xs).to(DEVICE))
    out = torch.full((*ids.shape, n), float("nan"), dtype=torch.float32, device=DEVICE)
    mmvq.matvec_experts(xqt, w.parts, int(t), n, k, torch.from_numpy(ids).to(DEVICE), out, **kw)
    return out.cpu().numpy()


CASES = [(GGMLType.Q4_K, 19, 512, 2, 8, (8, 8, 1)), (GGMLType.Q4_K, 9, 256, 4, 3, None),
         (GGMLType.Q6_K, 13, 768, 3, 4, (8, 4, 2)), (GGMLType.Q6_K, 7, 256, 1, 8, None),
         (GGMLType.Q8_0, 11, 512, 4, 5, (8, 8, 1)), (GGMLType.Q8_0, 5, 256, 1, 2, None),
         (GGMLType.MXFP4, 17, 352, 3, 4, (8, 4, 1)), (GGMLType.MXFP4, 9, 256, 2, 6, None)]


@pytest.mark.parametrize("t,n,k,T,nsel,cfg", CASES, ids=lambda v: getattr(v, "name", str(v)))
@pytest.mark.parametrize("per_slot", [False, True])
def test_matvec_experts(t, n, k, T, nsel, cfg, per_slot):
    """x (T, K) shared by a token's slots, or one x per (token, slot) (the down projection)."""
    rng = np.random.default_rng(n * k + T * nsel + per_slot)
    E = 10
    w, wd = stack(t, E, n, k, rng)
    x = rng.standard_normal((T * nsel if per_slot else T, k)).astype(np.float32)
    ids = random_ids(rng, T, nsel, E)
    got = run(x, w, t, n, k, ids, cfg=cfg)
    rows = (np.arange(T * nsel) if per_slot else np.repeat(np.arange(T), nsel)).reshape(T, nsel)
    want = np.einsum("tjnk,tjk->tjn", wd[ids], dequantized_x(x)[rows])
    assert rel(got, want) < 2e-6
    assert rel(got, np.einsum("tjnk,tjk->tjn", wd[ids], x.astype(np.float64)[rows])) < 2e-2


@pytest.mark.parametrize("t,n,k,cfg", [(GGMLType.Q4_K, 19, 512, (2, 1, 1, 1, 1, 2, 1)),
                                       (GGMLType.Q4_K, 9, 2048, (4, 2, 1, 1, 1, 2, 2)),
                                       (GGMLType.Q6_K, 13, 768, (2, 1, 2, 1, 1, 2, 1))],
                         ids=lambda v: getattr(v, "name", str(v)))
@pytest.mark.parametrize("per_slot", [False, True])
def test_matvec_experts_row_streams(t, n, k, cfg, per_slot):
    """The rows-as-streams form (V 2, kernels/mmvs.py) over a selection: plain, and a GLU of a fused
    (E, 2n, K) gate_up stack, against float64 math on the 8-bit activations."""
    rng = np.random.default_rng(n * k + per_slot + 3)
    E, T, nsel = 6, 3, 4
    w, wd = stack(t, E, 2 * n, k, rng)
    x = rng.standard_normal((T * nsel if per_slot else T, k)).astype(np.float32)
    ids = random_ids(rng, T, nsel, E)
    rows = (np.arange(T * nsel) if per_slot else np.repeat(np.arange(T), nsel)).reshape(T, nsel)
    xdq = dequantized_x(x)[rows]
    got = run(x, w, t, n, k, ids, cfg=cfg, expert_rows=2 * n)
    assert rel(got, np.einsum("tjnk,tjk->tjn", wd[ids][:, :, :n], xdq)) < 2e-6
    if cfg[0] > 2:
        return
    got = run(x, w, t, n, k, ids, cfg=cfg, glu=(w.parts, GLU_ACTS["silu"], n), expert_rows=2 * n)
    g = np.einsum("tjnk,tjk->tjn", wd[ids][:, :, :n], xdq)
    u = np.einsum("tjnk,tjk->tjn", wd[ids][:, :, n:], xdq)
    assert rel(got, CpuOps().glu(g.astype(np.float32), u.astype(np.float32), "silu")) < 1e-5


@pytest.mark.parametrize("t,act,fused", [(GGMLType.Q4_K, "silu", False), (GGMLType.Q8_0, "gelu", True),
                                         (GGMLType.MXFP4, "swiglu_oai", False), (GGMLType.Q6_K, "silu", True)],
                         ids=lambda v: getattr(v, "name", str(v)))
@pytest.mark.parametrize("biased", [False, True])
def test_matvec_experts_glu(t, act, fused, biased):
    """Gate and up of one selection in one kernel, as the NumPy backend's glu of the two products;
    separate gate/up stacks, or one fused (E, 2n, K) stack (gate rows, then up rows, per expert)."""
    rng = np.random.default_rng(len(act) + 2 * fused + biased)
    E, n, k, T, nsel = 7, 21, 256, 3, 4
    if fused:
        w, wd = stack(t, E, 2 * n, k, rng)
        up, gd, ud = w, wd[:, :n], wd[:, n:]
        glu, rows = (w.parts, GLU_ACTS[act], n), 2 * n
    else:
        (w, gd), (up, ud) = stack(t, E, n, k, rng), stack(t, E, n, k, rng)
        glu, rows = (up.parts, GLU_ACTS[act]), n
    bias = [rng.standard_normal((E, rows)).astype(np.float32) for _ in range(2)]
    x = rng.standard_normal((T, k)).astype(np.float32)
    ids = random_ids(rng, T, nsel, E)
    kw = {"bias": tuple(torch.from_numpy(b).to(DEVICE) for b in bias)} if biased else {}
    got = run(x, w, t, n, k, ids, glu=glu, expert_rows=rows, cfg=(8, 4, 1), **kw)
    xdq = dequantized_x(x)[:, None, :]
    g = np.einsum("tjnk,tjk->tjn", gd[ids], xdq)
    u = np.einsum("tjnk,tjk->tjn", ud[ids], xdq)
    if biased:
        g, u = g + bias[0][ids][..., :n], u + bias[1][ids][..., rows - n:]
    want = CpuOps().glu(g.astype(np.float32), u.astype(np.float32), act)
    assert rel(got, want) < (1e-3 if act == "gelu" else 1e-5)  # NumPy: llama.cpp's f16 GELU table


def test_matvec_experts_bias():
    """A plain expert product plus its per-expert bias (GPT-OSS's down projection)."""
    rng = np.random.default_rng(3)
    t, E, n, k, T, nsel = GGMLType.MXFP4, 5, 13, 288, 2, 3
    w, wd = stack(t, E, n, k, rng)
    b = rng.standard_normal((E, n)).astype(np.float32)
    x = rng.standard_normal((T * nsel, k)).astype(np.float32)
    ids = random_ids(rng, T, nsel, E)
    got = run(x, w, t, n, k, ids, bias=(torch.from_numpy(b).to(DEVICE),), cfg=(16, 16, 1))
    want = np.einsum("tjnk,tjk->tjn", wd[ids], dequantized_x(x).reshape(T, nsel, k)) + b[ids]
    assert rel(got, want) < 2e-6


@pytest.mark.parametrize("n,k", [(7, 352), (5, 2880)])
def test_matvec_mxfp4_dense(n, k):
    """The dense matvec takes MXFP4 too (K a multiple of 32; 2880 is GPT-OSS's width)."""
    rng = np.random.default_rng(n + k)
    qt = QTensor("w", GGMLType.MXFP4, (n, k), random_blocks(GGMLType.MXFP4, n * k, rng, scale=0.05))
    x = rng.standard_normal((2, k)).astype(np.float32)
    out = torch.empty((2, n), dtype=torch.float32, device=DEVICE)
    mmvq.matvec(mmvq.quantize_x(torch.from_numpy(x).to(DEVICE)), CudaWeight(qt, DEVICE).parts, int(qt.ggml_type),
                n, k, out, cfg=(8, 32, 1, 1))
    assert rel(out.cpu().numpy(), dequantized_x(x) @ qt.dequantize().astype(np.float64).T) < 2e-6


def test_e2m1_bytes_cover_every_code():
    """Every E2M1 code in every byte position: a weight row of all 16 codes against unit activations."""
    k = 64
    codes = np.arange(k) % 16
    perm = np.random.default_rng(0).permutation(k)
    blk = np.zeros((2, 17), np.uint8)
    blk[:, 0] = 127  # scale 2^(127 - 128) = 1/2: the doubled table values halve back
    c = codes[perm].reshape(2, 32)
    blk[:, 1:] = (c[:, :16] | (c[:, 16:] << 4)).astype(np.uint8)
    qt = QTensor("w", GGMLType.MXFP4, (1, k), blk.reshape(-1))
    want = qt.dequantize().astype(np.float64)
    eye = np.eye(k, dtype=np.float32)  # row i picks value i (quantized exactly: one nonzero per block)
    out = torch.empty((k, 1), dtype=torch.float32, device=DEVICE)
    mmvq.matvec(mmvq.quantize_x(torch.from_numpy(eye).to(DEVICE)), CudaWeight(qt, DEVICE).parts, 39, 1, k, out,
                cfg=(1, 2, 1, 1))
    np.testing.assert_array_equal(out.cpu().numpy()[:, 0], want[0])


@pytest.mark.parametrize("t,cfg,glu", [(GGMLType.Q4_K, (8, 8, 1), False), (GGMLType.Q6_K, (8, 4, 2), True),
                                       (GGMLType.Q4_K, (2, 1, 1, 1, 1, 2, 1), True),
                                       (GGMLType.Q6_K, (2, 1, 2, 1, 1, 2, 1), False)],
                         ids=lambda v: getattr(v, "name", str(v)))
@pytest.mark.parametrize("per_slot", [False, True])
def test_matvec_experts_in_expert_order(t, cfg, glu, per_slot):
    """The pairs launched expert by expert (`moe.expert_order`: many tokens sharing few experts) give each pair's
    product bit for bit as in token order, in both kernel forms, plain and GLU (a fused gate_up stack)."""
    rng = np.random.default_rng(7 + 2 * glu + per_slot)
    E, n, k, T, nsel = 5, 11, 512, 7, 3
    w, _ = stack(t, E, 2 * n, k, rng)
    x = rng.standard_normal((T * nsel if per_slot else T, k)).astype(np.float32)
    ids = random_ids(rng, T, nsel, E)
    order = expert_order(torch.from_numpy(ids).to(DEVICE))
    flat = ids.reshape(-1)
    assert np.array_equal(order[:flat.size].cpu().numpy(), flat)
    o = order[flat.size:].cpu().numpy()
    assert sorted(o.tolist()) == list(range(flat.size)) and np.all(np.diff(flat[o]) >= 0)
    kw = dict(cfg=cfg, expert_rows=2 * n, glu=(w.parts, GLU_ACTS["silu"], n) if glu else None)
    want = run(x, w, t, n, k, ids, **kw)
    got = run(x, w, t, n, k, ids, order=order, **kw)
    assert np.isfinite(want).all() and np.array_equal(got, want)
