"""The NumPy backend's ops for Qwen3.5 / Gemma 4 / gpt-oss against naive float64 formulas.

Causal conv1d with its rolling window, the gated delta rule (recurrent and chunked forms, which must
agree to 1e-5 relative), the unary functions, gpt-oss's clamped SwiGLU and IMROPE for text.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from zinc.backends.base import BaseOps, RopeParams
from zinc.backends.cpu import CpuOps

RNG = np.random.default_rng(7)


def rand(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


@pytest.fixture
def ops():
    return CpuOps()


def l2(x):
    return (x / np.sqrt((x.astype(np.float64) ** 2).sum(-1, keepdims=True) + 1e-6)).astype(np.float32)


def delta_inputs(T, Hk, Hv, S, decay=(-3.0, 1.0), correlated=False):
    base = np.ones((1, Hk, S)) if correlated else 0.0
    q = l2(rand(T, Hk, S))
    k = l2((base + (0.05 if correlated else 1.0) * rand(T, Hk, S)).astype(np.float32))
    v = rand(T, Hv, S)
    g = (-np.exp(RNG.uniform(*decay, (T, Hv)))).astype(np.float32)
    beta = (1 / (1 + np.exp(-rand(T, Hv)))).astype(np.float32)
    return q, k, v, g, beta


def naive_delta(q, k, v, g, beta, s0):
    """The recurrence of spec arch-qwen35.md §3.2 in float64 scalar loops (v-head h uses k-head h % Hk)."""
    T, Hv, S = v.shape
    Hk = q.shape[1]
    s = s0.astype(np.float64).copy()
    out = np.zeros((T, Hv, S))
    for t in range(T):
        for h in range(Hv):
            kh = h % Hk
            s[h] *= math.exp(g[t, h])
            d = (v[t, h] - s[h].T @ k[t, kh]) * beta[t, h]
            s[h] += np.outer(k[t, kh], d)
            out[t, h] = s[h].T @ q[t, kh] / math.sqrt(S)
    return out, s


def rel(a, b):
    return float(np.abs(np.asarray(a, np.float64) - b).max() / np.abs(b).max())


def test_conv1d_causal_and_rolling_state(ops):
    T, C, K = 9, 12, 4
    x, w, s0 = rand(T, C), rand(C, K), rand(K - 1, C)
    win = np.concatenate([s0, x]).astype(np.float64)
    ref = np.stack([(win[t:t + K] * w.T).sum(0) for t in range(T)])
    st = s0.copy()
    np.testing.assert_allclose(ops.conv1d_causal(x, st, w), ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(st, win[-(K - 1):].astype(np.float32))
    st2 = s0.copy()  # the same inputs in three steps give the same outputs and state
    parts = [ops.conv1d_causal(x[a:b], st2, w) for a, b in ((0, 4), (4, 5), (5, 9))]
    np.testing.assert_allclose(np.concatenate(parts), ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(st2, st)


@pytest.mark.parametrize("Hk,Hv", [(2, 2), (2, 4), (1, 3)])
def test_delta_net_recurrent_matches_naive(ops, Hk, Hv):
    q, k, v, g, beta = delta_inputs(11, Hk, Hv, 8)
    s0 = rand(Hv, 8, 8, scale=0.3)
    ref, s_ref = naive_delta(q, k, v, g, beta, s0)
    st = s0.copy()
    out = ops.delta_net_recurrent(q, k, v, g, beta, st)
    assert out.shape == (11, Hv, 8) and out.dtype == np.float32
    assert rel(out, ref) < 2e-6 and rel(st, s_ref) < 2e-6


def test_delta_net_mapping_is_tiled_not_grouped(ops):
    """v-head h reads k-head h % Hk: swapping to the grouped mapping h // r changes the output."""
    q, k, v, g, beta = delta_inputs(6, 2, 4, 8)
    out = ops.delta_net_recurrent(q, k, v, g, beta, np.zeros((4, 8, 8), np.float32))
    grouped = [0, 0, 1, 1]
    q2, k2 = q[:, grouped], k[:, grouped]  # pre-expanded to 4 heads with the grouped mapping
    out2 = ops.delta_net_recurrent(q2, k2, v, g, beta, np.zeros((4, 8, 8), np.float32))
    assert np.abs(out2[:, 1] - out[:, 1]).max() > 1e-3
    np.testing.assert_array_equal(out2[:, 0], out[:, 0])


@pytest.mark.parametrize("T,chunk", [(1, 64), (37, 64), (64, 64), (200, 64), (200, 16), (130, 7), (50, 300)])
@pytest.mark.parametrize("correlated", [False, True])
def test_delta_net_chunked_equals_recurrent(ops, T, chunk, correlated):
    Hk, Hv, S = 2, 4, 32
    decay = (-8.0, -4.0) if correlated else (-3.0, 1.0)  # slow decay + near-parallel keys: a hard case
    q, k, v, g, beta = delta_inputs(T, Hk, Hv, S, decay, correlated)
    s0 = rand(Hv, S, S, scale=0.1)
    a, b = s0.copy(), s0.copy()
    rec = ops.delta_net_recurrent(q, k, v, g, beta, a)
    chk = ops.delta_net_chunked(q, k, v, g, beta, b, chunk=chunk)
    assert chk.shape == rec.shape and chk.dtype == np.float32
    assert rel(chk, rec) < 1e-5, rel(chk, rec)
    assert rel(b, a) < 1e-5, rel(b, a)


def test_delta_net_chunked_in_pieces_continues_the_state(ops):
    Hk, Hv, S = 2, 4, 16
    q, k, v, g, beta = delta_inputs(150, Hk, Hv, S)
    whole_state = np.zeros((Hv, S, S), np.float32)
    whole = ops.delta_net_chunked(q, k, v, g, beta, whole_state)
    st = np.zeros((Hv, S, S), np.float32)
    parts = []
    for a, b in ((0, 70), (70, 71), (71, 150)):
        parts.append(ops.gated_delta_net(q[a:b], k[a:b], v[a:b], g[a:b], beta[a:b], st))
    assert rel(np.concatenate(parts), whole) < 1e-5
    assert rel(st, whole_state) < 1e-5


def test_gated_delta_net_default_picks_the_form(ops):
    calls = []

    class Spy(CpuOps):
        def delta_net_chunked(self, *a, **kw):
            calls.append("chunked")
            return super().delta_net_chunked(*a, **kw)

        def delta_net_recurrent(self, *a, **kw):
            calls.append("recurrent")
            return super().delta_net_recurrent(*a, **kw)

    spy = Spy()
    q, k, v, g, beta = delta_inputs(5, 1, 1, 4)
    st = np.zeros((1, 4, 4), np.float32)
    spy.gated_delta_net(q, k, v, g, beta, st)
    spy.gated_delta_net(q[:1], k[:1], v[:1], g[:1], beta[:1], st)
    assert calls == ["chunked", "recurrent"]
    assert BaseOps.gated_delta_net is CpuOps.gated_delta_net


def test_fused_delta_net_defaults_equal_the_op_sequence(ops):
    """BaseOps' delta_net_step, conv1d_causal_act and rms_norm_gated do exactly the ops the Gated
    DeltaNet layer ran one by one (bit for bit on NumPy), state updates included."""
    T, Hk, Hv, S, K, eps = 3, 2, 4, 16, 4, 1e-6
    q, k, v = rand(T, Hk, S, scale=2.0), rand(T, Hk, S), rand(T, Hv, S)
    alpha, b, dt_bias = rand(T, Hv, scale=8.0), rand(T, Hv), rand(Hv)
    alpha[0, 0] = 25.0
    a = (-np.exp(RNG.uniform(-2.0, 1.0, Hv))).astype(np.float32)
    s0 = rand(Hv, S, S, scale=0.3)
    for n in (T, 1):
        st1, st2 = s0.copy(), s0.copy()
        beta = ops.unary(b[:n], "sigmoid")
        g = ops.mul(ops.unary(ops.add(alpha[:n], dt_bias), "softplus"), a)
        qn, kn = (ops.scale(ops.rms_norm(x[:n], None, eps / S), 1.0 / math.sqrt(S)) for x in (q, k))
        want = ops.gated_delta_net(qn, kn, v[:n], g, beta, st1)
        got = ops.delta_net_step(q[:n], k[:n], v[:n], alpha[:n], b[:n], dt_bias, a, st2, eps)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(st2, st1)
    x, w, c0 = rand(T, 24), rand(24, K), rand(K - 1, 24)
    c1, c2 = c0.copy(), c0.copy()
    np.testing.assert_array_equal(ops.conv1d_causal_act(x, c2, w, "silu"),
                                  ops.unary(ops.conv1d_causal(x, c1, w), "silu"))
    np.testing.assert_array_equal(c2, c1)
    o, z, nw = rand(T, Hv, S), rand(T, Hv, S), rand(S)
    np.testing.assert_array_equal(ops.rms_norm_gated(o, nw, eps, z, "silu"),
                                  ops.mul(ops.rms_norm(o, nw, eps), ops.unary(z, "silu")))
    assert CpuOps.delta_net_step is BaseOps.delta_net_step and CpuOps.rms_norm_gated is BaseOps.rms_norm_gated


def test_unary(ops):
    x = np.concatenate([rand(50, scale=5.0), np.array([-30.0, 19.9, 20.0, 25.0, 80.0], np.float32)])
    x64 = x.astype(np.float64)
    sig = 1 / (1 + np.exp(-x64))
    np.testing.assert_allclose(ops.unary(x, "sigmoid"), sig, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ops.unary(x, "silu"), x64 * sig, rtol=1e-5, atol=1e-6)
    sp = np.where(x64 > 20, x64, np.log1p(np.exp(np.minimum(x64, 50))))
    np.testing.assert_allclose(ops.unary(x, "softplus"), sp, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(ops.unary(x, "gelu"), ops.glu(x, np.ones_like(x), "gelu"))
    with pytest.raises(ValueError):
        ops.unary(x, "tanh")


def test_swiglu_oai(ops):
    g, u = rand(4, 32, scale=6.0), rand(4, 32, scale=6.0)
    g64, u64 = np.minimum(g, 7.0).astype(np.float64), np.clip(u, -7.0, 7.0).astype(np.float64)
    ref = g64 / (1 + np.exp(-1.702 * g64)) * (u64 + 1)
    np.testing.assert_allclose(ops.glu(g, u, "swiglu_oai"), ref, rtol=1e-5, atol=1e-5)
    assert (g > 7).any() and (np.abs(u) > 7).any()  # the clamps are exercised


def test_imrope_text_equals_neox_for_covered_sections(ops):
    """Qwen3.5's sections cover every rotated pair with streams t/h/w, so text IMROPE == NEOX."""
    x, pos = rand(5, 2, 64), np.array([0, 1, 5, 77, 300], np.int32)
    neox = RopeParams(n_dims=16, mode="neox", freq_base=1e7)
    imrope = RopeParams(n_dims=16, mode="imrope", freq_base=1e7, sections=(3, 3, 2, 0))
    np.testing.assert_array_equal(ops.rope(x, pos, imrope), ops.rope(x, pos, neox))
    np.testing.assert_array_equal(ops.rope(x, pos, imrope)[..., 16:], x[..., 16:])


def test_imrope_pairs_of_the_extra_stream_stay_unrotated(ops):
    """Pairs whose sector falls to stream e (position 0 for text) are not rotated."""
    from zinc.backends.cpu.ops import imrope_text_mask

    mask = imrope_text_mask((1, 1, 1, 1), 8)  # sector = i % 4; sector 3 -> t only if 3 < 3*s0: no -> e
    assert list(mask) == [1, 1, 1, 0, 1, 1, 1, 0]
    x, pos = rand(3, 1, 16), np.array([0, 9, 40], np.int32)
    y = ops.rope(x, pos, RopeParams(n_dims=16, mode="imrope", freq_base=1e4, sections=(1, 1, 1, 1)))
    for i in (3, 7):  # NEOX pairs (i, i + 8)
        np.testing.assert_array_equal(y[..., [i, i + 8]], x[..., [i, i + 8]])
    assert np.abs(y[1:, :, 0] - x[1:, :, 0]).max() > 1e-3
