"""The layer's Q and K rope op (`rope_qk_kv_write`): the default composition in `BaseOps` on the
NumPy backend, and the CUDA backend's one-launch kernel (and the multi-program single-tensor rope)
against it on odd head counts and token counts.

Without a GPU the kernels run in Triton's interpreter (TRITON_INTERPRET=1, set before Triton is
imported) on CPU tensors; with one they run on it. The CUDA tests skip when torch or triton is missing.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from zinc.backends.base import RopeParams
from zinc.backends.cpu import CpuOps
from zinc.testing.compare import rel_err as rel

EPS = 1e-6


@pytest.fixture(scope="module")
def ref():
    return CpuOps()


@pytest.fixture(scope="module")
def kel():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")
    pytest.importorskip("triton")
    from zinc.backends.cuda.kernels import elementwise

    return elementwise


@pytest.fixture(scope="module")
def ops(kel):
    import torch

    from zinc.backends.cuda.ops import CudaOps

    return CudaOps(device="cuda" if torch.cuda.is_available() else "cpu", graphs=False)


def _case(seed: int, T: int, Hq: int, Hk: int, Dh: int, Dv: int, norms: bool, S: int = 11):
    """Fresh random q, k, v, norm weights, positions, distinct slots and an empty cache's arrays."""
    rng = np.random.default_rng(seed)
    f = np.float32
    q = rng.standard_normal((T, Hq, Dh)).astype(f)
    k = rng.standard_normal((T, Hk, Dh)).astype(f)
    v = rng.standard_normal((T, Hk, Dv)).astype(f)
    qw = rng.standard_normal(Dh).astype(f) if norms else None
    kw = rng.standard_normal(Dh).astype(f) if norms else None
    pos = (np.arange(T) + rng.integers(0, 50)).astype(np.int32)
    slots = rng.permutation(S)[:T].astype(np.int32)
    cache = (np.zeros((S, Hk, Dh), f), np.zeros((S, Hk, Dv), f), np.full((S,), -1, np.int32))
    return q, k, v, qw, kw, pos, slots, cache


class _Recorder(CpuOps):
    """The NumPy backend, noting which rope ops the default composition calls, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def rope(self, *a, **kw):
        self.calls.append("rope")
        return super().rope(*a, **kw)

    def norm_rope(self, *a, **kw):
        self.calls.append("norm_rope")
        return super().norm_rope(*a, **kw)

    def rope_kv_write(self, *a, **kw):
        self.calls.append("rope_kv_write")
        return super().rope_kv_write(*a, **kw)

    def norm_rope_kv_write(self, *a, **kw):
        self.calls.append("norm_rope_kv_write")
        return super().norm_rope_kv_write(*a, **kw)


@pytest.mark.parametrize("norms", [True, False])
def test_default_is_the_two_calls(norms):
    """BaseOps.rope_qk_kv_write = Q's (norm_)rope, then K's (norm_)rope(_kv_write), in this order."""
    q, k, v, qw, kw, pos, slots, (ck, cv, cp) = _case(1, 3, 5, 3, 12, 7, norms)
    p = RopeParams(8, "neox", 1e4)
    rec = _Recorder()
    ck2, cv2, cp2 = ck.copy(), cv.copy(), cp.copy()
    got = rec.rope_qk_kv_write(q, k, v, pos, p, None, ck, cv, cp, slots, q_norm=qw, k_norm=kw, eps=EPS)
    assert rec.calls == (["norm_rope", "rope", "norm_rope_kv_write", "rope_kv_write", "rope"] if norms
                         else ["rope", "rope_kv_write", "rope"])
    cpu = CpuOps()
    if norms:
        want = cpu.norm_rope(q, qw, EPS, pos, p)
        cpu.norm_rope_kv_write(k, kw, EPS, v, pos, p, None, ck2, cv2, cp2, slots)
    else:
        want = cpu.rope(q, pos, p)
        cpu.rope_kv_write(k, v, pos, p, None, ck2, cv2, cp2, slots)
    np.testing.assert_array_equal(got, want)
    for a, b in ((ck, ck2), (cv, cv2), (cp, cp2)):
        np.testing.assert_array_equal(a, b)


CASES = [  # (mode, n_dims, Dh, Dv, Hq, Hk, T, norms, freq factors)
    ("neox", 64, 64, 64, 7, 5, 1, True, False),  # several programs for q and for k
    ("neox", 48, 64, 40, 9, 3, 3, True, True),  # n_dims < Dh, Dv != Dh, freq factors
    ("norm", 16, 20, 8, 5, 1, 5, True, False),
    ("norm", 12, 20, 20, 11, 3, 2, False, True),
    ("neox", 20, 20, 12, 3, 3, 3, False, False),
    ("imrope", 16, 24, 24, 6, 2, 3, True, False),
]


def _rope_params(mode: str, n_dims: int, yarn: bool = False) -> RopeParams:
    if yarn:
        return RopeParams(n_dims, mode, 1e4, freq_scale=0.25, ext_factor=1.0, n_ctx_orig=64)
    return RopeParams(n_dims, mode, 1e4, sections=(2, 2, 2, 2) if mode == "imrope" else ())


@pytest.mark.parametrize("one_head", [False, True], ids=["blocks", "one_head"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_rope_qk_kv_write(ops, ref, kel, monkeypatch, case, one_head):
    """The CUDA one-launch Q + K rope (+ norms, + cache write) against the NumPy backend."""
    mode, n_dims, Dh, Dv, Hq, Hk, T, norms, with_ff = case
    if one_head:  # one head per program: every block boundary exercised
        monkeypatch.setattr(kel, "ROPE_BLOCK", 1)
    q, k, v, qw, kw, pos, slots, (ck, cv, cp) = _case(Hq * 100 + T, T, Hq, Hk, Dh, Dv, norms)
    ff = np.random.default_rng(3).uniform(0.5, 4.0, n_dims // 2).astype(np.float32) if with_ff else None
    p = _rope_params(mode, n_dims)
    want = ref.rope_qk_kv_write(q, k, v, pos, p, ff, ck, cv, cp, slots, q_norm=qw, k_norm=kw, eps=EPS)
    for kv_dtype in ("f32", "f16"):
        C = ops.from_numpy
        gk, gv, gp = ops.zeros(ck.shape, kv_dtype), ops.zeros(cv.shape, kv_dtype), ops.full(cp.shape, -1, "i32")
        got = ops.rope_qk_kv_write(C(q), C(k), C(v), C(pos), p, C(ff) if with_ff else None, gk, gv, gp, C(slots),
                                   q_norm=C(qw) if norms else None, k_norm=C(kw) if norms else None, eps=EPS)
        assert got.shape == want.shape and rel(ops.to_numpy(got), want) < 1e-5
        tol = 1e-5 if kv_dtype == "f32" else 1e-3
        assert rel(ops.to_numpy(gk).astype(np.float32), ck) < tol
        assert rel(ops.to_numpy(gv).astype(np.float32), cv) < tol
        np.testing.assert_array_equal(ops.to_numpy(gp), cp)
    # q, k, v as the parts of one fused projection's output (`ops.split` views, read in place): the same
    rows = C(np.concatenate([a.reshape(T, -1) for a in (q, k, v)], 1))
    fq, fk, fv = (ops.reshape(x, a.shape) for x, a in zip(ops.split(rows, [a[0].size for a in (q, k, v)]), (q, k, v)))
    assert T == 1 or not fk.is_contiguous()
    fk_, fv_, fp_ = ops.zeros(ck.shape, "f16"), ops.zeros(cv.shape, "f16"), ops.full(cp.shape, -1, "i32")
    again = ops.rope_qk_kv_write(fq, fk, fv, C(pos), p, C(ff) if with_ff else None, fk_, fv_, fp_, C(slots),
                                 q_norm=C(qw) if norms else None, k_norm=C(kw) if norms else None, eps=EPS)
    assert np.array_equal(ops.to_numpy(again), ops.to_numpy(got))
    assert all(np.array_equal(ops.to_numpy(a), ops.to_numpy(b)) for a, b in ((fk_, gk), (fv_, gv), (fp_, gp)))


def test_rope_qk_kv_write_yarn_and_capture(ops, ref):
    """YaRN (mscale != 1) and the cells taken from the positions (pos % cells) while capturing."""
    q, k, v, qw, kw, pos, _, (ck, cv, cp) = _case(7, 1, 7, 3, 32, 32, True, S=5)
    pos = np.array([13], np.int32)
    p = _rope_params("neox", 32, yarn=True)
    want = ref.rope_qk_kv_write(q, k, v, pos, p, None, ck, cv, cp, np.array([13 % 5], np.int32), q_norm=qw,
                                k_norm=kw, eps=EPS)
    C = ops.from_numpy
    gk, gv, gp = ops.zeros(ck.shape, "f32"), ops.zeros(cv.shape, "f32"), ops.full(cp.shape, -1, "i32")
    ops.capturing = True
    try:
        got = ops.rope_qk_kv_write(C(q), C(k), C(v), C(pos), p, None, gk, gv, gp, C(np.array([0], np.int32)),
                                   q_norm=C(qw), k_norm=C(kw), eps=EPS)
    finally:
        ops.capturing = False
    assert rel(ops.to_numpy(got), want) < 1e-5
    assert rel(ops.to_numpy(gk), ck) < 1e-5 and rel(ops.to_numpy(gv), cv) < 1e-6
    assert list(ops.to_numpy(gp)) == [-1, -1, -1, 13, -1]


@pytest.mark.parametrize("one_head", [False, True], ids=["blocks", "one_head"])
@pytest.mark.parametrize("mode,n_dims,norm", [("neox", 48, True), ("norm", 64, False), ("norm", 40, True)])
def test_rope_multi_program(ops, ref, kel, monkeypatch, mode, n_dims, norm, one_head):
    """The single-tensor rope (q-only layers, prefill) over programs of a few heads, and its KV form."""
    if one_head:
        monkeypatch.setattr(kel, "ROPE_BLOCK", 1)
    T, H, Dh = 3, 13, 64
    q, k, v, qw, _, pos, slots, (ck, cv, cp) = _case(n_dims, T, H, H, Dh, 16, norm)
    p = _rope_params(mode, n_dims)
    C = ops.from_numpy
    want = ref.norm_rope(q, qw, EPS, pos, p) if norm else ref.rope(q, pos, p)
    got = ops.norm_rope(C(q), C(qw), EPS, C(pos), p) if norm else ops.rope(C(q), C(pos), p)
    assert rel(ops.to_numpy(got), want) < 1e-5
    gk, gv, gp = ops.zeros(ck.shape, "f32"), ops.zeros(cv.shape, "f32"), ops.full(cp.shape, -1, "i32")
    if norm:
        want = ref.norm_rope_kv_write(k, qw, EPS, v, pos, p, None, ck, cv, cp, slots)
        got = ops.norm_rope_kv_write(C(k), C(qw), EPS, C(v), C(pos), p, None, gk, gv, gp, C(slots))
    else:
        want = ref.rope_kv_write(k, v, pos, p, None, ck, cv, cp, slots)
        got = ops.rope_kv_write(C(k), C(v), C(pos), p, None, gk, gv, gp, C(slots))
    assert rel(ops.to_numpy(got), want) < 1e-5 and rel(ops.to_numpy(gk), ck) < 1e-5
    assert rel(ops.to_numpy(gv), cv) < 1e-6
    np.testing.assert_array_equal(ops.to_numpy(gp), cp)


ATTN_CASES = [  # (mode, n_dims, Dh, Dv, Hq, Hk, T, norms, freq factors, window, new cells: "pos" (their
    # positions), "holes" (holes of earlier splits), "short" (one past the extent: split 0 writes it), "capture"
    # (from the positions while a graph is captured))
    ("neox", 48, 64, 40, 6, 2, 1, True, True, 0, "pos"),  # n_dims < Dh, Dv != Dh
    ("neox", 48, 64, 40, 6, 2, 1, True, False, 0, "capture"),
    ("norm", 16, 20, 20, 5, 1, 3, True, False, 0, "holes"),
    ("imrope", 16, 24, 24, 6, 3, 2, False, False, 9, "holes"),
    ("imrope", 16, 24, 24, 6, 3, 2, False, False, 9, "capture"),
    ("neox", 32, 32, 32, 4, 4, 1, False, False, 0, "short"),
]


@pytest.mark.parametrize("splits,cdt,stages", [(5, np.float32, 3), (1, np.float32, 3), (5, np.float16, 3),
                                               (1, np.float16, 3), (2, np.float16, 0), (2, np.float32, 0)])
@pytest.mark.parametrize("case", ATTN_CASES, ids=lambda c: "-".join(map(str, c[:7] + c[-1:])))
def test_rope_qk_attention(ops, ref, monkeypatch, case, splits, cdt, stages):
    """`rope_qk_attention` (the decode attention's split programs doing the norms, the rope and the KV write)
    against the NumPy backend's composition: the output and every cache cell, over several splits or one (which
    writes the output itself), on f32 and f16 cells; stages 0: the split loop unrolled (3 steps of 16 cells a split,
    those past the extent masked)."""
    import zinc.backends.cuda.ops as cuda_ops

    mode, n_dims, Dh, Dv, Hq, Hk, T, norms, with_ff, window, cells = case
    monkeypatch.setattr(cuda_ops, "ATTN_SPLITS", [(1 << 62, splits, 16, stages)])  # 16-cell blocks: the cells span
    monkeypatch.setattr(cuda_ops, "ATTN_SPLITS_WIDE", cuda_ops.ATTN_SPLITS)  # cards of either bandwidth
    # splits
    rng = np.random.default_rng(Hq * 31 + T)
    f = np.float32
    S, P0 = 70, 50
    q, k, v = (rng.standard_normal(s).astype(f) for s in ((T, Hq, Dh), (T, Hk, Dh), (T, Hk, Dv)))
    qw, kw = (rng.standard_normal(Dh).astype(f) if norms else None for _ in range(2))
    ck, cv = rng.standard_normal((S, Hk, Dh)).astype(cdt), rng.standard_normal((S, Hk, Dv)).astype(cdt)
    cp = np.full(S, -1, np.int32)
    cp[:P0] = np.arange(P0)
    holes = rng.choice(P0 - 2, T + 2, replace=False)
    cp[holes] = -1
    pos = np.arange(P0, P0 + T, dtype=np.int32)
    slots = (holes[:T] if cells == "holes" else pos).astype(np.int32)  # a cell's index never exceeds its position
    n_kv = P0 - 3 if cells == "short" else S
    ff = rng.uniform(0.5, 4.0, n_dims // 2).astype(f) if with_ff else None
    p = _rope_params(mode, n_dims)
    C = ops.from_numpy
    gk, gv, gp = C(ck), C(cv), C(cp)
    want_kv = (ck.copy(), cv.copy(), cp.copy())
    want = ref.rope_qk_attention(q, k, v, pos, p, ff, *want_kv, slots, n_kv, 0.3, window=window, q_norm=qw,
                                 k_norm=kw, eps=EPS)
    ops.capturing = cells == "capture"
    try:
        got = ops.rope_qk_attention(C(q), C(k), C(v), C(pos), p, None if ff is None else C(ff), gk, gv, gp, C(slots),
                                    n_kv, 0.3, window=window, q_norm=None if qw is None else C(qw),
                                    k_norm=None if kw is None else C(kw), eps=EPS)
    finally:
        ops.capturing = False
    tol = 1e-5 if cdt == np.float32 else 2e-3  # f16 cells: f16 query and probability operands
    assert got.shape == want.shape and rel(ops.to_numpy(got), want) < tol
    assert rel(ops.to_numpy(gk), want_kv[0]) < tol and rel(ops.to_numpy(gv), want_kv[1]) < 1e-6
    np.testing.assert_array_equal(ops.to_numpy(gp), want_kv[2])
