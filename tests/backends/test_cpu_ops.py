"""The NumPy backend's ops against naive float64 formulas of spec common-ops.md."""

from __future__ import annotations

import math

import numpy as np
import pytest

from zinc.backends.base import BaseOps, QTensor, RopeParams
from zinc.backends.cpu import CpuOps
from zinc.gguf.constants import GGMLType
from zinc.gguf.quants import dequantize, quantize

RNG = np.random.default_rng(0)


def rand(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def qtensor(x: np.ndarray, t: str) -> QTensor:
    gt = GGMLType[t]
    return QTensor("w", gt, x.shape, quantize(x, gt))


@pytest.fixture
def ops():
    return CpuOps()


def test_rms_norm(ops):
    x, w = rand(5, 96), rand(96)
    x64 = x.astype(np.float64)
    ref = x64 / np.sqrt((x64 ** 2).mean(-1, keepdims=True) + 1e-6) * w
    np.testing.assert_allclose(ops.rms_norm(x, w, 1e-6), ref, rtol=1e-5, atol=1e-6)
    assert ops.rms_norm(x, None, 1e-6).dtype == np.float32


def naive_rope(x, pos, p: RopeParams, ff=None):
    """Scalar float64 rotation of spec common-ops §2 (no YaRN)."""
    out = x.astype(np.float64).copy()
    T, H, D = x.shape
    for t in range(T):
        for i in range(p.n_dims // 2):
            theta = pos[t] * p.freq_base ** (-2.0 * i / p.n_dims) / (ff[i] if ff is not None else 1.0)
            theta *= p.freq_scale
            c, s = math.cos(theta) * p.attn_factor, math.sin(theta) * p.attn_factor
            a, b = (i, i + p.n_dims // 2) if p.mode == "neox" else (2 * i, 2 * i + 1)
            x0, x1 = x[t, :, a].astype(np.float64), x[t, :, b].astype(np.float64)
            out[t, :, a], out[t, :, b] = x0 * c - x1 * s, x0 * s + x1 * c
    return out


@pytest.mark.parametrize("mode", ["norm", "neox"])
@pytest.mark.parametrize("n_dims", [32, 16])
def test_rope(ops, mode, n_dims):
    x, pos = rand(6, 3, 32), np.array([0, 1, 2, 7, 100, 4095], np.int32)
    p = RopeParams(n_dims=n_dims, mode=mode, freq_base=10000.0, freq_scale=0.5, attn_factor=1.0)
    ff = np.linspace(1, 8, n_dims // 2).astype(np.float32)
    for factors in (None, ff):
        got = ops.rope(x, pos, p, factors)
        # f32 angles at position 4095 carry ~4095 * 2^-24 rad of rounding
        np.testing.assert_allclose(got, naive_rope(x, pos, p, factors), rtol=0, atol=1e-3)
        np.testing.assert_array_equal(got[..., n_dims:], x[..., n_dims:])  # partial rotary passes through


def test_rope_yarn_scales_magnitude(ops):
    x, pos = rand(3, 2, 64), np.arange(3, dtype=np.int32)
    p = RopeParams(n_dims=64, mode="neox", freq_base=10000.0, freq_scale=0.25, ext_factor=1.0,
                   attn_factor=1.0, n_ctx_orig=4096)
    y = ops.rope(x, pos, p)
    gain = 1 + 0.1 * math.log(4.0)
    np.testing.assert_allclose(np.linalg.norm(y, axis=-1), gain * np.linalg.norm(x, axis=-1), rtol=1e-5)
    np.testing.assert_allclose(y[0], gain * x[0], rtol=1e-5)  # position 0: no rotation


def naive_attention(q, k, v, q_pos, kv_pos, scale, window=0, softcap=0.0, sinks=None):
    T, Hq, _ = q.shape
    r = Hq // k.shape[1]
    out = np.zeros((T, Hq, v.shape[2]))
    for t in range(T):
        for h in range(Hq):
            g = h // r
            s = []
            for j in range(len(kv_pos)):
                p0, p1 = kv_pos[j], q_pos[t]
                if p0 < 0 or p0 > p1 or (window and p1 - p0 >= window):
                    s.append(-np.inf)
                    continue
                d = float(q[t, h] @ k[j, g].astype(np.float64))
                if softcap:
                    d = softcap * math.tanh(d / softcap)
                s.append(scale * d)
            s = np.array(s)
            m = s.max() if sinks is None else max(s.max(), sinks[h])
            e = np.exp(s - m)
            z = e.sum() + (0.0 if sinks is None else math.exp(sinks[h] - m))
            out[t, h] = (e / z) @ v[:, g].astype(np.float64)
    return out


@pytest.mark.parametrize("window,softcap,use_sinks", [(0, 0.0, False), (5, 0.0, False), (0, 20.0, True)])
def test_attention_gqa_masks(ops, window, softcap, use_sinks):
    T, S, Hq, Hkv, D = 4, 12, 6, 2, 16
    q, k, v = rand(T, Hq, D), rand(S, Hkv, D), rand(S, Hkv, 8)
    kv_pos = np.array([3, 4, 5, 6, 7, 8, 9, 10, 11, -1, 0, 1], np.int32)  # a ring: cells out of order, one empty
    q_pos = np.array([8, 9, 10, 11], np.int32)
    sinks = rand(Hq) if use_sinks else None
    got = ops.attention(q, k, v, q_pos, kv_pos, S, 0.25, window=window, softcap=softcap, sinks=sinks)
    ref = naive_attention(q, k, v, q_pos, kv_pos, 0.25, window, softcap, sinks)
    assert got.shape == (T, Hq, 8)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def test_attention_reads_only_n_kv_cells(ops):
    q, k, v = rand(1, 2, 8), rand(10, 1, 8), rand(10, 1, 8)
    pos = np.arange(10, dtype=np.int32)
    a = ops.attention(q, k, v, np.array([3], np.int32), pos, 4, 1.0)
    k[4:], v[4:] = np.nan, np.nan
    np.testing.assert_array_equal(ops.attention(q, k, v, np.array([3], np.int32), pos, 4, 1.0), a)


@pytest.mark.parametrize("t", ["F32", "F16", "Q8_0", "Q4_0", "Q5_0", "Q4_K", "Q5_K", "Q6_K"])
def test_matmul_and_embed_every_type(t):
    w = rand(48, 256, scale=0.1)
    qt = qtensor(w, t)
    deq = dequantize(qt.data, qt.ggml_type, qt.n_elements).reshape(48, 256)
    x = rand(3, 256)
    for budget in (8 << 30, 0):  # kept float32 copy, and per-use decoding in row blocks
        ops = CpuOps(dequant_budget=budget)
        h = ops.upload(qt)
        np.testing.assert_allclose(ops.matmul(x, h), x @ deq.T, rtol=1e-5, atol=1e-4)
        ids = np.array([5, 0, 5, 47], np.int32)
        np.testing.assert_array_equal(ops.embed(h, ids), deq[ids])
    assert CpuOps(dequant_budget=0).upload(qt).f32() is None


def test_matmul_experts(ops):
    E, N, K, T, k = 5, 32, 64, 4, 2
    w = rand(E, N, K)
    h = ops.upload(qtensor(w, "Q8_0"))
    deq = h.qt.dequantize()
    ids = np.array([[0, 3], [3, 1], [4, 0], [2, 2]], np.int32)
    x = rand(T, K)
    got = ops.matmul_experts(x, h, ids)
    x3 = rand(T, k, K)
    got3 = ops.matmul_experts(x3, h, ids)
    for t in range(T):
        for j in range(k):
            np.testing.assert_allclose(got[t, j], deq[ids[t, j]] @ x[t], rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(got3[t, j], deq[ids[t, j]] @ x3[t, j], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(CpuOps(dequant_budget=0).matmul_experts(x, CpuOps(0).upload(h.qt), ids), got)


def test_router_topk(ops):
    logits = np.array([[0.1, 2.0, -1.0, 2.0, 0.5], [3.0, 0.0, 0.0, 0.0, 1.0]], np.float32)
    ids, w = ops.router_topk(logits, 2, "softmax", True, 0.0)
    np.testing.assert_array_equal(ids, [[1, 3], [0, 4]])  # exact tie: lowest index first
    np.testing.assert_allclose(w.sum(-1), 1.0, rtol=1e-6)
    p = np.exp(logits[1]) / np.exp(logits[1]).sum()
    ids2, w2 = ops.router_topk(logits, 2, "softmax", False, 2.0)
    np.testing.assert_allclose(w2[1], 2 * p[[0, 4]], rtol=1e-6)
    o = rand(2, 2, 7)
    np.testing.assert_allclose(ops.weighted_sum(o, w), (o * w[..., None]).sum(1), rtol=1e-6)


def test_glu(ops):
    g, u = rand(4, 64, scale=3), rand(4, 64)
    g64 = g.astype(np.float64)
    np.testing.assert_allclose(ops.glu(g, u, "silu"), g64 / (1 + np.exp(-g64)) * u, rtol=1e-5, atol=1e-6)
    exact = 0.5 * g64 * (1 + np.tanh(math.sqrt(2 / math.pi) * (g64 + 0.044715 * g64 ** 3))) * u
    np.testing.assert_allclose(CpuOps(gelu="exact").glu(g, u, "gelu"), exact, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ops.glu(g, u, "gelu"), exact, rtol=2e-3, atol=2e-3)  # f16 table
    edge = np.array([-12.0, -10.0, 10.0, 11.5], np.float32)
    np.testing.assert_array_equal(ops.glu(edge, np.ones(4, np.float32), "gelu"), [0, 0, 10.0, 11.5])


def test_softcap_and_scale(ops):
    x = rand(3, 10, scale=50)
    np.testing.assert_allclose(ops.softcap(x, 30.0), 30 * np.tanh(x / 30), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(ops.scale(x, 2.0), x * 2)


def test_fused_defaults_equal_their_compositions(ops):
    x, r, w = rand(3, 64), rand(3, 64), rand(64)
    s, n = ops.add_rms_norm(x, r, w, 1e-6)
    np.testing.assert_array_equal(s, x + r)
    np.testing.assert_array_equal(n, ops.rms_norm(x + r, w, 1e-6))
    wg, wu = ops.upload(qtensor(rand(32, 64), "Q8_0")), ops.upload(qtensor(rand(32, 64), "Q8_0"))
    np.testing.assert_array_equal(ops.matmul_glu(x, wg, wu, "silu"),
                                  ops.glu(ops.matmul(x, wg), ops.matmul(x, wu), "silu"))
    assert isinstance(ops, BaseOps)


def test_qtensor_rows():
    w = rand(4, 64)
    qt = qtensor(w, "Q8_0")
    assert qt.rows().shape == (4, 2 * 34) and qt.row_nbytes == 68 and qt.nbytes == 4 * 68
    np.testing.assert_array_equal(qt.dequantize(), dequantize(qt.data, "Q8_0", 256).reshape(4, 64))
