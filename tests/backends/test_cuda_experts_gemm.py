"""`kernels.moe.experts_gemm` (a prompt's expert matmuls as one grouped GEMM: the (token, slot) pairs sorted by
expert on the device, each block of pairs against its expert's dequantized weight tiles) against float64 NumPy
on fresh random stacks: odd row counts, an expert never chosen, repeated experts, tokens shared by their slots or
one input row a pair, the gate/up GLU form. Triton's interpreter without a GPU."""

from __future__ import annotations

import os

import numpy as np
import pytest

from zinc.backends.base import QTensor
from zinc.gguf.constants import GGMLType as T
from zinc.gguf.quants import random_blocks
from zinc.testing.compare import rel_err as rel

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")
pytest.importorskip("triton")
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@pytest.fixture(scope="module")
def ops():
    from zinc.backends.cuda.ops import CudaOps

    return CudaOps(device=DEVICE, graphs=False)


def _ids(rng, n_tok, e, nsel):
    ids = np.stack([rng.choice(e - 1, nsel, replace=False) for _ in range(n_tok)]).astype(np.int32)  # e-1 unused
    ids[-1] = ids[0]  # two tokens with the same experts
    return ids


def _glu_case(rng, t, e, n, k, n_tok, nsel):
    """Fresh gate and up stacks (E, N, K) of type t, ids (T, NSEL), x (T, K) and the float64 silu(x Wg^T) * (x Wu^T)
    of each (token, slot)."""
    qs = [QTensor(f"w{i}", t, (e, n, k), random_blocks(t, e * n * k, rng, scale=0.05)) for i in range(2)]
    ws = [q.dequantize().astype(np.float64).reshape(e, n, k) for q in qs]
    ids = _ids(rng, n_tok, e, nsel)
    x = rng.standard_normal((n_tok, k)).astype(np.float32)
    g = np.einsum("tk,tsnk->tsn", x.astype(np.float64), ws[0][ids])
    return qs, ids, x, g / (1.0 + np.exp(-g)) * np.einsum("tk,tsnk->tsn", x.astype(np.float64), ws[1][ids])


def test_align_pairs():
    from zinc.backends.cuda.kernels.moe import align_pairs

    rng = np.random.default_rng(3)
    ids = _ids(rng, 23, 7, 3)
    for bm in (1, 4, 16, 64):
        pairs, block_e = (t.cpu().numpy() for t in align_pairs(torch.from_numpy(ids).to(DEVICE), 7, bm))
        assert pairs.shape == (block_e.size * bm,)
        real = pairs[pairs >= 0]
        assert sorted(real.tolist()) == list(range(ids.size))  # every pair once
        flat = ids.reshape(-1)
        for blk, e in enumerate(block_e):
            p = pairs[blk * bm:(blk + 1) * bm]
            if e < 0:
                assert (p < 0).all()
            else:
                assert (p >= 0).any() and (flat[p[p >= 0]] == e).all()
        used = block_e[block_e >= 0]
        assert (np.diff(used) >= 0).all() and set(used) == set(flat.tolist())


@pytest.mark.parametrize("t,k", [(T.Q4_K, 512), (T.Q6_K, 768), (T.Q8_0, 288), (T.MXFP4, 160)],
                         ids=lambda v: getattr(v, "name", str(v)))
@pytest.mark.parametrize("shape", ["token", "pair", "glu"])
def test_experts_gemm(ops, t, k, shape):
    from zinc.backends.cuda.kernels.elementwise import GLU_ACTS
    from zinc.backends.cuda.kernels.moe import experts_gemm

    rng = np.random.default_rng(int(t) * 7 + k + len(shape))
    e, n, n_tok, nsel = 6, 37, 9, 3
    qs = [QTensor(f"w{i}", t, (e, n, k), random_blocks(t, e * n * k, rng, scale=0.05)) for i in range(2)]
    ws = [q.dequantize().astype(np.float64).reshape(e, n, k) for q in qs]
    ids = _ids(rng, n_tok, e, nsel)
    x = rng.standard_normal((n_tok, nsel, k) if shape == "pair" else (n_tok, k)).astype(np.float32)
    xs = x if shape == "pair" else np.repeat(x[:, None], nsel, axis=1)
    y = np.einsum("tsk,tsnk->tsn", xs.astype(np.float64), ws[0][ids])
    if shape == "glu":
        up = np.einsum("tsk,tsnk->tsn", xs.astype(np.float64), ws[1][ids])
        y = y / (1.0 + np.exp(-y)) * up
    up_parts = (ops.upload(qs[1]).parts, GLU_ACTS["silu"]) if shape == "glu" else None
    for bm, bn in ((16, 16), (16, 64)):
        got = experts_gemm(ops.from_numpy(x), ops.upload(qs[0]).parts, int(t), e, n, k, ops.from_numpy(ids),
                           glu=up_parts, bm=bm, bn=bn)
        assert got.shape == (n_tok, nsel, n)
        assert rel(ops.to_numpy(got), y) < 3e-3  # f16 tiles (Q4_K, Q6_K: f16 scales and products too)


@pytest.mark.parametrize("t", [T.Q4_K, T.Q6_K, T.Q8_0, T.MXFP4], ids=lambda t: t.name)
@pytest.mark.parametrize("swap", [False, True])
def test_experts_gemm_operand_orders(ops, t, swap):
    """Both operand orders of the kernel (x W^T, and W x^T stored transposed) give the products: the GLU form, odd
    rows, K = 768, 16- and 32-pair blocks."""
    from zinc.backends.cuda.kernels.elementwise import GLU_ACTS
    from zinc.backends.cuda.kernels.moe import experts_gemm

    rng = np.random.default_rng(int(t) + swap)
    e, n, k, n_tok, nsel = 5, 21, 768, 7, 2
    qs, ids, x, y = _glu_case(rng, t, e, n, k, n_tok, nsel)
    for bm in (16, 32):
        got = experts_gemm(ops.from_numpy(x), ops.upload(qs[0]).parts, int(t), e, n, k, ops.from_numpy(ids),
                           glu=(ops.upload(qs[1]).parts, GLU_ACTS["silu"]), bm=bm, bn=16, swap=swap)
        assert rel(ops.to_numpy(got), y) < 3e-3  # f16 tiles (Q4_K, Q6_K: f16 scales and products too)


@pytest.mark.parametrize("t", [T.Q4_K, T.MXFP4, T.Q5_0], ids=lambda t: t.name)
@pytest.mark.parametrize("pairs_cheaper", [False, True])
def test_ops_take_the_grouped_gemm(ops, monkeypatch, t, pairs_cheaper):
    """`CudaOps.matmul_experts` / `matmul_experts_glu` of a prompt (4+ pairs an expert, a type of `kq.SUB64`) are one
    grouped GEMM each, equal to the NumPy backend's, whether or not the matvec over the pairs is cheaper than the
    per-expert loop; fewer pairs or other types keep the other paths."""
    from zinc.backends.cpu import CpuOps
    from zinc.backends.cuda.kernels import moe as kmoe

    calls = []
    real = kmoe.experts_gemm
    monkeypatch.setattr(kmoe, "experts_gemm", lambda *a, **kw: calls.append(kw.get("glu") is not None) or real(*a, **kw))
    monkeypatch.setattr(ops, "_pairs_cheaper", lambda w, pairs: pairs_cheaper)  # tiny experts: always cheaper
    rng = np.random.default_rng(int(t))
    e, n, k, nsel = 6, 21, 256, 2
    ref = CpuOps()
    qs = [QTensor(f"w{i}", t, (e, n, k), random_blocks(t, e * n * k, rng, scale=0.05)) for i in range(2)]
    for n_tok in (7, 13):  # 14 pairs (< 4 an expert), 26
        ids = _ids(rng, n_tok, e, nsel)
        x = rng.standard_normal((n_tok, k)).astype(np.float32)
        calls.clear()
        got = ops.to_numpy(ops.matmul_experts(ops.from_numpy(x), ops.upload(qs[0]), ops.from_numpy(ids)))
        want = ref.to_numpy(ref.matmul_experts(ref.from_numpy(x), ref.upload(qs[0]), ref.from_numpy(ids)))
        assert rel(got, want) < 2e-2
        got = ops.to_numpy(ops.matmul_experts_glu(ops.from_numpy(x), *(ops.upload(q) for q in qs), ops.from_numpy(ids),
                                                  "silu"))
        want = ref.to_numpy(ref.matmul_experts_glu(ref.from_numpy(x), *(ref.upload(q) for q in qs),
                                                   ref.from_numpy(ids), "silu"))
        assert rel(got, want) < 2e-2
        assert calls == ([False, True] if n_tok == 13 and t != T.Q5_0 else [])


@pytest.mark.parametrize("t", [T.Q4_K, T.Q6_K], ids=lambda t: t.name)
@pytest.mark.parametrize("swap", [False, True])
def test_experts_gemm_glu_split_in_launch(ops, monkeypatch, t, swap):
    """The GLU form with K split and summed inside the launch (sems): gate and up slices summed by each tile's last
    split, then the activation; the counters back at zero after; without sems the GLU keeps K whole (the launch
    grid's third axis)."""
    from zinc.backends.cuda.kernels import moe as kmoe
    from zinc.backends.cuda.kernels.elementwise import GLU_ACTS
    from zinc.backends.cuda.kernels.moe import experts_gemm

    grids, kernel = [], kmoe.experts_gemm_kernel

    class Spy:
        def __getitem__(self, grid):
            grids.append(grid[2])
            return kernel[grid]

    monkeypatch.setattr(kmoe, "experts_gemm_kernel", Spy())

    rng = np.random.default_rng(int(t) + 5 * swap)
    e, n, k, n_tok, nsel = 4, 23, 768, 6, 2
    qs, ids, x, y = _glu_case(rng, t, e, n, k, n_tok, nsel)
    sems = torch.zeros(64, dtype=torch.int32, device=DEVICE)
    for splits, counters in ((3, sems), (4, sems), (3, None)):
        got = experts_gemm(ops.from_numpy(x), ops.upload(qs[0]).parts, int(t), e, n, k, ops.from_numpy(ids),
                           glu=(ops.upload(qs[1]).parts, GLU_ACTS["silu"]), bm=16, bn=16, swap=swap, splits=splits,
                           sems=counters)
        assert rel(ops.to_numpy(got), y) < 3e-3
        assert int(sems.abs().sum()) == 0
    assert grids == [3, 4, 1]
