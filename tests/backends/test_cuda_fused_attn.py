"""The CUDA decode step's fused attention: a one-token `rope_qk_kv_write` deferred into the split
kernel of the next `attention` (kernels/attention.py, FUSE), against the NumPy backend and against
the unfused path (the rope_qk kernel, then attention) on odd shapes; the cache cells it writes equal
the unfused path's; anything else falls back.

Without a GPU the kernels run in Triton's interpreter (TRITON_INTERPRET=1, set before Triton is
imported) on CPU tensors; with one they run on it. Skipped when torch or triton is missing.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")
pytest.importorskip("triton")

from zinc.backends.base import RopeParams  # noqa: E402
from zinc.backends.cpu import CpuOps  # noqa: E402
from zinc.backends.cuda import ops as cuda_ops  # noqa: E402
from zinc.backends.cuda.ops import CudaOps  # noqa: E402
from zinc.testing.compare import rel_err as rel  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
EPS = 1e-6
SCALE = 0.21


@pytest.fixture(scope="module")
def ops():
    return CudaOps(device=DEVICE, graphs=False)


@pytest.fixture(scope="module")
def ref():
    return CpuOps()


@pytest.fixture
def fused_calls(monkeypatch):
    """Whether each decode attention launch took a deferred rope_qk_kv_write (FUSE), in order."""
    calls = []
    launch = cuda_ops.kattn.decode_attention

    def spy(*a, **kw):
        calls.append(kw.get("fuse") is not None)
        return launch(*a, **kw)
    monkeypatch.setattr(cuda_ops.kattn, "decode_attention", spy)
    return calls


def _rope(mode: str, n_dims: int, yarn: bool) -> RopeParams:
    if yarn:
        return RopeParams(n_dims, mode, 1e4, freq_scale=0.25, ext_factor=1.0, n_ctx_orig=64)
    return RopeParams(n_dims, mode, 1e4, sections=(2, 2, 2, 2) if mode == "imrope" else ())


def _layer(seed, Hq, Hk, Dh, Dv, S, n_kv, slot, pos, norms, ff_dims, kv):
    """Random raw q, k, v (1 token), norm weights, freq factors, sinks and a cache of S cells whose
    first n_kv hold positions (holes at a few), values representable in the cache type."""
    rng = np.random.default_rng(seed)
    f = np.float32
    dt = np.float16 if kv == "f16" else f
    q, k = rng.standard_normal((1, Hq, Dh)).astype(f), rng.standard_normal((1, Hk, Dh)).astype(f)
    v = rng.standard_normal((1, Hk, Dv)).astype(f)
    qw, kw = (rng.uniform(0.5, 1.5, Dh).astype(f) for _ in range(2)) if norms else (None, None)
    ff = rng.uniform(0.5, 4.0, ff_dims // 2).astype(f) if ff_dims else None
    ck = rng.standard_normal((S, Hk, Dh)).astype(dt).astype(f)
    cv = rng.standard_normal((S, Hk, Dv)).astype(dt).astype(f)
    cp = np.where(np.arange(S) < n_kv, pos - n_kv + np.arange(S), -1).astype(np.int32)
    cp[rng.choice(n_kv, 2, replace=False)] = -1
    cp[slot] = 7  # a stale position: the token's write replaces it
    sinks = rng.standard_normal(Hq).astype(f)
    return q, k, v, qw, kw, ff, (ck, cv, cp), sinks


# Hq, Hk, Dh, Dv, mode, n_dims, norms, freq factors, yarn, window, softcap, sinks, kv, S, n_kv, slot
CASES = [
    (6, 2, 40, 40, "neox", 20, True, False, False, 0, 0.0, False, "f16", 37, 25, 9),  # partial rotary
    (6, 2, 40, 24, "norm", 40, False, True, False, 6, 0.0, True, "f32", 30, 30, 29),  # Dv != Dh, window
    (5, 5, 32, 32, "imrope", 16, True, False, False, 0, 30.0, False, "f16", 21, 17, 0),  # R = 1, softcap
    (4, 1, 64, 64, "neox", 64, True, False, True, 0, 0.0, True, "f32", 40, 33, 20),  # YaRN, sinks, R = 4
    (8, 2, 24, 24, "norm", 12, False, False, False, 9, 20.0, True, "f16", 64, 50, 49),  # everything at once
    (6, 2, 16, 16, "neox", 16, True, False, False, 0, 0.0, False, "f16", 48, 12, 30),  # cell past the extent
]


def _paths(ops, ref, case, strided=False):
    """(fused out, unfused out, NumPy out, fused cache, unfused cache, NumPy cache) of one layer's step."""
    Hq, Hk, Dh, Dv, mode, n_dims, norms, with_ff, yarn, window, cap, sinks, kv, S, n_kv, slot = case
    pos = 60
    q, k, v, qw, kw, ff, (ck, cv, cp), snk = _layer(sum(case[:4]) + S, Hq, Hk, Dh, Dv, S, n_kv, slot, pos, norms,
                                                    n_dims if with_ff else 0, kv)
    snk = snk if sinks else None
    p = _rope(mode, n_dims, yarn)
    P, sl = np.array([pos], np.int32), np.array([slot], np.int32)
    rc = (ck.copy(), cv.copy(), cp.copy())
    qr = ref.rope_qk_kv_write(q, k, v, P, p, ff, *rc, sl, q_norm=qw, k_norm=kw, eps=EPS)
    want = ref.attention(qr, *rc[:2], P, rc[2], n_kv, SCALE, window=window, softcap=cap, sinks=snk)
    C = ops.from_numpy
    outs, caches = [], []
    for fused in (True, False):
        gk, gv, gp = ops.zeros(ck.shape, kv), ops.zeros(cv.shape, kv), ops.zeros(cp.shape, "i32")
        for g, a in ((gk, ck), (gv, cv), (gp, cp)):
            ops.overwrite(g, a.astype(np.float16) if kv == "f16" and a.dtype == np.float32 else a)
        gq = C(q)
        if strided:  # Q as the first half of each head's (Q, gate) row (gated attention)
            gq = ops.split(C(np.concatenate([q, -q], axis=2)), (Dh, Dh))[0]
        gP = C(P)  # one positions tensor, as a model step passes
        got_q = ops.rope_qk_kv_write(gq, C(k), C(v), gP, p, C(ff) if with_ff else None, gk, gv, gp, C(sl),
                                     q_norm=C(qw) if norms else None, k_norm=C(kw) if norms else None, eps=EPS)
        assert ops._qk is not None
        if not fused:
            got_q = ops.reshape(got_q, got_q.shape)  # another op first: the rope_qk kernel runs now
            assert ops._qk is None
        o = ops.attention(got_q, gk, gv, gP, gp, n_kv, SCALE, window=window, softcap=cap,
                          sinks=None if snk is None else C(snk))
        assert ops._qk is None and type(ops) is CudaOps
        outs.append(ops.to_numpy(o))
        caches.append(tuple(ops.to_numpy(a) for a in (gk, gv, gp)))
    return outs[0], outs[1], want, caches[0], caches[1], rc


@pytest.mark.parametrize("splits", [None, (5, 16)], ids=["splits-default", "splits-5x16"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "h{}x{}-d{}x{}-{}{}".format(*c[:6]))
def test_fused_decode_layer(ops, ref, monkeypatch, fused_calls, case, splits):
    """Fused = unfused (outputs to f32 rounding, cache cells bit for bit) and both = NumPy."""
    if splits is not None:  # small splits: the token's cell in a split other than the first
        monkeypatch.setattr(cuda_ops, "ATTN_SPLITS", [(1 << 62, *splits)])
    fused, unfused, want, fc, uc, rc = _paths(ops, ref, case)
    assert fused_calls == [True, False]
    for a, b in zip(fc, uc):
        np.testing.assert_array_equal(a, b)
    kv = case[12]
    tol = 1e-5 if kv == "f32" else 3e-3  # f16: the new K / V rounded to the cache type
    assert rel(fused, unfused) < 1e-5
    assert rel(fused, want) < tol
    for a, b in zip(fc, rc):
        assert rel(a.astype(np.float32), b) < tol
    np.testing.assert_array_equal(fc[2], rc[2])


def test_fused_strided_q(ops, ref, fused_calls):
    """Q whose heads are further apart than their width (a gated layer's split): read in place."""
    fused, unfused, want, fc, uc, _ = _paths(ops, ref, CASES[0], strided=True)
    assert fused_calls == [True, False]
    assert rel(fused, unfused) < 1e-5 and rel(fused, want) < 3e-3
    for a, b in zip(fc, uc):
        np.testing.assert_array_equal(a, b)


def test_fused_while_capturing(ops, ref, fused_calls):
    """While a graph is captured: the cell is pos % cells and the extent comes from the position."""
    Hq, Hk, Dh, S, pos = 6, 2, 24, 16, 37
    q, k, v, qw, kw, _, (ck, cv, cp), _ = _layer(5, Hq, Hk, Dh, Dh, S, S, pos % S, pos, True, 0, "f32")
    cp[:] = [max(t for t in range(pos) if t % S == c) for c in range(S)]  # positions 0 .. pos-1 at t % S
    p = _rope("neox", Dh, False)
    P = np.array([pos], np.int32)
    rc = (ck.copy(), cv.copy(), cp.copy())
    qr = ref.rope_qk_kv_write(q, k, v, P, p, None, *rc, np.array([pos % S], np.int32), q_norm=qw, k_norm=kw, eps=EPS)
    want = ref.attention(qr, *rc[:2], P, rc[2], S, SCALE, window=5)
    C = ops.from_numpy
    gk, gv, gp = (C(a.copy()) for a in (ck, cv, cp))
    gP = C(P)
    ops.capturing = True
    try:
        got_q = ops.rope_qk_kv_write(C(q), C(k), C(v), gP, p, None, gk, gv, gp, C(np.array([0], np.int32)),
                                     q_norm=C(qw), k_norm=C(kw), eps=EPS)
        o = ops.attention(got_q, gk, gv, gP, gp, 3, SCALE, window=5)
    finally:
        ops.capturing = False
    assert fused_calls == [True] and rel(ops.to_numpy(o), want) < 1e-5
    assert rel(ops.to_numpy(gk), rc[0]) < 1e-6 and rel(ops.to_numpy(gv), rc[1]) < 1e-7
    np.testing.assert_array_equal(ops.to_numpy(gp), rc[2])


def test_not_deferred(ops, ref, fused_calls):
    """More than one token runs at once; an op between (a Q pre-scale) and an attention over another
    cache each run the deferred op first, so they see it done."""
    C = ops.from_numpy
    q, k, v, qw, kw, _, (ck, cv, cp), _ = _layer(9, 4, 2, 16, 16, 12, 8, 10, 30, True, 0, "f32")
    p, P, sl = _rope("neox", 16, False), np.array([30], np.int32), np.array([10], np.int32)
    q2, k2, v2 = (np.concatenate([a, a + 1]) for a in (q, k, v))
    gk, gv, gp = (C(a.copy()) for a in (ck, cv, cp))
    ops.rope_qk_kv_write(C(q2), C(k2), C(v2), C(np.array([30, 31], np.int32)), p, None, gk, gv, gp,
                         C(np.array([10, 11], np.int32)), q_norm=C(qw), k_norm=C(kw), eps=EPS)
    assert ops._qk is None
    rc = (ck.copy(), cv.copy(), cp.copy())
    qr = ref.rope_qk_kv_write(q, k, v, P, p, None, *rc, sl, q_norm=qw, k_norm=kw, eps=EPS)
    want = ref.attention(ref.scale(qr, 0.5), *rc[:2], P, rc[2], 11, SCALE)
    gk, gv, gp = (C(a.copy()) for a in (ck, cv, cp))
    gP = C(P)
    got_q = ops.rope_qk_kv_write(C(q), C(k), C(v), gP, p, None, gk, gv, gp, C(sl), q_norm=C(qw), k_norm=C(kw),
                                 eps=EPS)
    o = ops.attention(ops.scale(got_q, 0.5), gk, gv, gP, gp, 11, SCALE)
    assert rel(ops.to_numpy(o), want) < 1e-5
    gk, gv, gp = (C(a.copy()) for a in (ck, cv, cp))
    got_q = ops.rope_qk_kv_write(C(q), C(k), C(v), gP, p, None, gk, gv, gp, C(sl), q_norm=C(qw), k_norm=C(kw),
                                 eps=EPS)
    other = C(rc[0].copy()), C(rc[1].copy()), C(rc[2].copy())
    o = ops.attention(got_q, *other[:2], gP, other[2], 11, SCALE)
    assert ops._qk is None and type(ops) is CudaOps
    assert rel(ops.to_numpy(o), ref.attention(qr, *rc[:2], P, rc[2], 11, SCALE)) < 1e-5
    assert rel(ops.to_numpy(gk), rc[0]) < 1e-6 and (ops.to_numpy(gp) == rc[2]).all()
    assert not any(fused_calls)


@pytest.mark.slow
def test_tiny_decode(tmp_path, fused_calls):
    """A tiny Qwen3 (q/k norms): prefill, then decode steps whose attention layers all take the fused
    path, against the NumPy backend."""
    from zinc.api import load
    from zinc.synth import write_model
    from zinc.testing.compare import compare_logits

    path = tmp_path / "qwen3-tiny-F16.gguf"
    write_model(str(path), "qwen3-tiny", ftype="F16", seed=1)
    ids = [int(i) for i in np.random.default_rng(2).integers(0, 500, 6)]
    want = load(path, backend=CpuOps(), n_ctx=32).logits(ids)
    m = load(path, backend=CudaOps(device=DEVICE, graphs=False), n_ctx=32)
    cache = m.new_cache(32)
    steps = [m.forward(ids[:4], cache)]
    del fused_calls[:]
    steps += [m.forward([t], cache) for t in ids[4:]]
    assert fused_calls and all(fused_calls)
    got = compare_logits(np.concatenate(steps), want)
    assert got["argmax_agree"] == 1.0 and got["mean_kl"] < 1e-3, got
