"""Batched decode attention over several sequences' own KV caches (`kernels.seqs.attention_seqs`) against
the NumPy backend's `rope_qk_attention` run on each sequence's cache separately: the outputs and every cache
cell, on f16 and f32 cells, odd head dims and head counts, ring caches with a window, sinks, norms, rope
layouts and one or several splits; and one launch serving later positions unchanged.

Without a GPU the kernels run in Triton's interpreter (TRITON_INTERPRET=1, set before Triton is imported)
on CPU tensors; with one they run on it. The tests skip when torch or triton is missing.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from zinc.backends.base import RopeParams
from zinc.backends.cpu import CpuOps
from zinc.testing.compare import rel_err as rel

EPS = 1e-6
SCALE = 0.3


@pytest.fixture(scope="module")
def kseq():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")
    pytest.importorskip("triton")
    from zinc.backends.cuda.kernels import seqs

    return seqs


@pytest.fixture(scope="module")
def ops(kseq):
    import torch

    from zinc.backends.cuda.ops import CudaOps

    return CudaOps(device="cuda" if torch.cuda.is_available() else "cpu", graphs=False)


def _cache(rng, size: int, pos: int, hk: int, d: int, dv: int, cdt):
    """One sequence's pre-filled cache before the token at pos: random cells holding the latest earlier
    position of their ring slot (j itself where size > pos), about a fifth of them empty (-1), one holding a
    later position (stale, masked by causality) and cells past the token's empty."""
    ck = rng.standard_normal((size, hk, d)).astype(cdt)
    cv = rng.standard_normal((size, hk, dv)).astype(cdt)
    j = np.arange(size)
    cp = np.where(j < pos, pos - 1 - (pos - 1 - j) % size, -1).astype(np.int32)
    cp[rng.random(size) < 0.2] = -1
    cp[rng.integers(0, min(size, pos + 1))] = pos + 3
    return ck, cv, cp


class _Batch:
    """B sequences' inputs, their NumPy caches (the reference's) and the device's copies with the table."""

    def __init__(self, ops, seed: int, sizes, pos, hq: int, hk: int, d: int, dv: int, cdt, norms: bool,
                 sinks: bool):
        import torch

        from zinc.backends.cuda.kernels.seqs import table_row

        rng = self.rng = np.random.default_rng(seed)
        self.shape = (hq, hk, d, dv)
        self.qw, self.kw = (rng.standard_normal(d).astype(np.float32) if norms else None for _ in range(2))
        self.sinks = rng.standard_normal(hq).astype(np.float32) if sinks else None
        self.caches = [list(_cache(rng, s, int(t), hk, d, dv, cdt)) for s, t in zip(sizes, pos)]
        self.dev = [[ops.from_numpy(a) for a in c] for c in self.caches]
        self.table = torch.tensor([table_row(*c) for c in self.dev], dtype=torch.int64, device=ops.device)

    def inputs(self, B: int):
        hq, hk, d, dv = self.shape
        f = np.float32
        return tuple(self.rng.standard_normal(s).astype(f) for s in ((B, hq, d), (B, hk, d), (B, hk, dv)))

    def reference(self, ref, q, k, v, pos, p: RopeParams, window: int) -> np.ndarray:
        """Each sequence's `rope_qk_attention` on its own NumPy cache (which it updates), stacked."""
        outs = []
        for b, (ck, cv, cp) in enumerate(self.caches):
            size, at = ck.shape[0], np.array([pos[b]], np.int32)
            outs.append(ref.rope_qk_attention(q[b:b + 1], k[b:b + 1], v[b:b + 1], at, p, None, ck, cv, cp,
                                              at % size, min(size, int(pos[b]) + 1), SCALE, window=window,
                                              sinks=self.sinks, q_norm=self.qw, k_norm=self.kw, eps=EPS))
        return np.concatenate(outs)

    def run(self, ops, kseq, q, k, v, pos_t, p: RopeParams, window: int, nsplit: int, fused: bool = False,
            out16=None):
        """fused: q, k and v as the parts of one fused projection's output (`ops.split` views, rows wider than each);
        out16: the f16 copy's buffer."""
        c, mscale = ops._rope_factors(p, None)
        C = ops.from_numpy
        opt = lambda a: None if a is None else C(a)  # noqa: E731
        f16 = self.caches[0][0].dtype == np.float16
        qkv = [C(a) for a in (q, k, v)]
        if fused:
            rows = ops.from_numpy(np.concatenate([a.reshape(len(a), -1) for a in (q, k, v)], 1))
            qkv = [ops.reshape(x, a.shape) for x, a in zip(ops.split(rows, [a[0].size for a in (q, k, v)]), (q, k, v))]
            assert len(q) == 1 or not qkv[0].is_contiguous()
        return kseq.attention_seqs(*qkv, pos_t, self.table, f16, c, mscale, p.n_dims,
                                   p.mode in ("neox", "imrope"), SCALE, window=window, sinks=opt(self.sinks),
                                   q_w=opt(self.qw), k_w=opt(self.kw), eps=EPS, nsplit=nsplit, out16=out16)

    def check_cells(self, ops, tol: float):
        for (ck, cv, cp), (gk, gv, gp) in zip(self.caches, self.dev):
            assert rel(ops.to_numpy(gk).astype(np.float32), ck.astype(np.float32)) < tol
            np.testing.assert_array_equal(ops.to_numpy(gv), cv)
            np.testing.assert_array_equal(ops.to_numpy(gp), cp)


CASES = [  # (sizes, Hq, Hkv, D, Dv, n_dims, mode, cells, window, sinks, norms, nsplit)
    ((40,), 4, 2, 64, 64, 64, "neox", np.float16, 0, False, True, 1),
    ((19, 70, 40), 6, 2, 80, 80, 80, "norm", np.float32, 0, True, False, 3),
    ((7, 19, 7, 40, 7), 8, 1, 128, 128, 128, "neox", np.float16, 6, True, True, 4),  # ring caches, window
    ((70, 7, 19), 4, 2, 64, 48, 48, "norm", np.float32, 0, False, True, 2),  # Dv != D, rope on 48 of 64 dims
    ((19, 40, 7, 70, 19), 6, 2, 80, 80, 80, "norm", np.float16, 8, True, False, 2),
    ((70,), 8, 1, 128, 128, 128, "imrope", np.float32, 0, True, True, 5),
    ((40, 70, 19), 8, 1, 64, 64, 32, "neox", np.float16, 0, False, False, 16),  # splits past the cells
]


def _params(mode: str, n_dims: int) -> RopeParams:
    return RopeParams(n_dims, mode, 1e4, sections=(4, 4, 4, 4) if mode == "imrope" else ())


@pytest.mark.parametrize("block", [16, 64])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, (len(c[0]),) + c[1:7] + c[8:])))
def test_attention_seqs(ops, kseq, monkeypatch, case, block):
    """Outputs and written cells against each sequence's NumPy composition (rope + KV write + attention);
    16-cell blocks: the splits' chunks end inside the small caches."""
    import torch

    monkeypatch.setattr(kseq, "BLOCK_CELLS", block)
    sizes, hq, hk, d, dv, n_dims, mode, cdt, window, sinks, norms, nsplit = case
    rng = np.random.default_rng(hq * 1000 + d + len(sizes))
    pos = np.array([rng.integers(0, 2 * s) for s in sizes], np.int32)
    batch = _Batch(ops, int(rng.integers(1 << 30)), sizes, pos, hq, hk, d, dv, cdt, norms, sinks)
    q, k, v = batch.inputs(len(sizes))
    p = _params(mode, n_dims)
    want = batch.reference(CpuOps(), q, k, v, pos, p, window)
    got = batch.run(ops, kseq, q, k, v, ops.from_numpy(pos), p, window, nsplit)
    tol = 2e-3 if cdt == np.float16 else 1e-5
    assert tuple(got.shape) == (len(sizes), hq, dv) and got.dtype == torch.float32
    assert rel(ops.to_numpy(got), want) < tol
    batch.check_cells(ops, 1e-3 if cdt == np.float16 else 1e-6)
    if block == 64:  # the same from the parts of a fused projection's output, read in place (no copies), and with
        # the output also stored in f16 (for the output projection's tile GEMM)
        half = torch.full((len(sizes), hq * dv), 7.0, dtype=torch.float16, device=ops.device)
        fused = batch.run(ops, kseq, q, k, v, ops.from_numpy(pos), p, window, nsplit, fused=True, out16=half)
        assert torch.equal(fused, got) and torch.equal(half, got.reshape(half.shape).half())
        batch.check_cells(ops, 1e-3 if cdt == np.float16 else 1e-6)


def test_launch_independent_of_pos(ops, kseq):
    """One launch configuration (same nsplit, table and position tensor, updated in place as a replayed graph
    would see it) over successive steps whose extents, ring wraps and split chunks all move."""
    p = _params("neox", 64)
    pos = np.array([3, 2, 17], np.int32)
    batch = _Batch(ops, 5, (7, 70, 19), pos, 4, 2, 64, 64, np.float16, True, True)
    pos_t = ops.from_numpy(pos)
    for step in range(4):
        q, k, v = batch.inputs(3)
        want = batch.reference(CpuOps(), q, k, v, pos, p, 5)
        got = batch.run(ops, kseq, q, k, v, pos_t, p, 5, 4)
        assert rel(ops.to_numpy(got), want) < 2e-3, step
        batch.check_cells(ops, 1e-3)
        pos = pos + np.array([2, 21, 1], np.int32)
        pos_t.copy_(ops.from_numpy(pos))


def test_seq_splits_and_table_row(ops, kseq):
    """seq_splits: 1 for short caches, growing to 16; table_row: the addresses and the size."""
    counts = [kseq.seq_splits(n) for n in (0, 1, 256, 512, 513, 2048, 16384, 1 << 20)]
    assert counts[:4] == [1, 1, 1, 1] and counts[-2:] == [16, 16]
    assert counts == sorted(counts)
    ck, cv, cp = ops.from_numpy(np.zeros((9, 2, 4), np.float16)), ops.from_numpy(
        np.zeros((9, 2, 3), np.float16)), ops.from_numpy(np.full(9, -1, np.int32))
    assert kseq.table_row(ck, cv, cp) == [ck.data_ptr(), cv.data_ptr(), cp.data_ptr(), 9]


def test_graph_replay(ops, kseq):
    """On a GPU: the three launches captured once in a CUDA graph, then replayed at later positions (new
    inputs copied into the captured tensors) give each step's reference."""
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs a GPU")
    p, sizes, window = _params("norm", 80), (7, 70, 40), 6
    pos = np.array([5, 60, 1], np.int32)
    warm = _Batch(ops, 8, sizes, pos, 6, 2, 80, 80, np.float16, True, True)  # compiles outside the capture
    batch = _Batch(ops, 9, sizes, pos, 6, 2, 80, 80, np.float16, True, True)
    C = ops.from_numpy
    static = [C(a) for a in batch.inputs(3)] + [C(pos)]
    warm.run(ops, kseq, *(ops.to_numpy(a) for a in static[:3]), static[3], p, window, 2)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    c, mscale = ops._rope_factors(p, None)
    sinks, qw, kw = C(batch.sinks), C(batch.qw), C(batch.kw)
    with torch.cuda.graph(graph):
        out = kseq.attention_seqs(*static[:3], static[3], batch.table, True, c, mscale, p.n_dims, False, SCALE,
                                  window=window, sinks=sinks, q_w=qw, k_w=kw, eps=EPS, nsplit=2)
    for step in range(3):
        q, k, v = batch.inputs(3)
        for dst, a in zip(static, (q, k, v, pos)):
            dst.copy_(C(a))
        want = batch.reference(CpuOps(), q, k, v, pos, p, window)
        graph.replay()
        assert rel(ops.to_numpy(out), want) < 2e-3, step
        batch.check_cells(ops, 1e-3)
        pos = pos + np.array([3, 5, 30], np.int32)


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["qwen3-tiny", "qwen35-tiny"])
def test_model_forward_seqs(kseq, monkeypatch, tmp_path, preset):
    """A whole tiny model's steps of six sequences decoding together (`Model.forward_seqs`) on the CUDA backend (in the
    interpreter without a GPU, eager): the tile GEMM of 6 rows, every attention layer through `attention_seqs` and
    every recurrent one through `conv_delta_seqs` (counted), against the NumPy backend's."""
    import torch

    from zinc.api import load
    from zinc.backends.cuda.kernels import recurrent as krec
    from zinc.backends.cuda.ops import CudaOps
    from zinc.synth import write_model
    from zinc.testing.compare import compare_logits

    calls = {"attn": 0, "delta": 0}

    def counted(name, fn):
        def run(*a, **kw):
            calls[name] += 1
            return fn(*a, **kw)
        return run

    monkeypatch.setattr(kseq, "attention_seqs", counted("attn", kseq.attention_seqs))
    monkeypatch.setattr(krec, "conv_delta_seqs", counted("delta", krec.conv_delta_seqs))
    path = write_model(tmp_path / f"{preset}.gguf", preset, ftype="Q8_0", seed=11).path
    m = load(path, backend=CudaOps(device="cuda" if torch.cuda.is_available() else "cpu", graphs=False), n_ctx=48)
    ref = load(path, backend="cpu", n_ctx=48)
    rng = np.random.default_rng(3)
    prompts = [rng.integers(0, m.n_vocab, int(n)).tolist() for n in (3, 9, 17, 5, 12, 7)]
    caches, refs = [m.new_cache() for _ in prompts], [ref.new_cache() for _ in prompts]
    for p, c, r in zip(prompts, caches, refs):
        m.forward(p[:-1], c)
        ref.forward(p[:-1], r)
    last = [p[-1] for p in prompts]
    for step in range(2):
        got = m.forward_seqs([([t], c) for t, c in zip(last, caches)])
        want = ref.forward_seqs([([t], c) for t, c in zip(last, refs)])
        res = compare_logits(got, want)
        assert res["argmax_agree"] == 1.0 and res["mean_kl"] < 1e-3, (step, res)
        last = np.argmax(want, -1).tolist()
    cfg = m.config
    n_rec = sum(cfg.is_recurrent(il) for il in range(cfg.n_layer))
    assert calls == {"attn": 2 * (cfg.n_layer - n_rec), "delta": 2 * n_rec}
