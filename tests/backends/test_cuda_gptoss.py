"""The CUDA backend's decode ops at GPT-OSS 20B widths against the NumPy backend.

`zinc bench` refused the synthetic gpt-oss-20b (MXFP4_MOE) because its step-by-step logits differ
from its prefill logits. These tests pin down that the decode kernels are right at its shapes
(D = 2880 = 90 blocks of 32, 64 query heads over 8 KV heads of 64, sinks, a window of 128, the
attention output quantized in the combine kernel for a K = 4096 Q8_0 matvec, MXFP4 experts of
K = 2880): every op is within its numerics' error (8-bit activations: ~5e-3 relative), so the
divergence of the whole model is not a kernel bug. It is the router: top-4 of 32 on raw logits,
then a softmax over the 4 winners, flips an expert wherever the random router's 4th/5th logit gap
is smaller than the ~1% activation noise of 8-bit matvecs (`bench/gptoss_route_flips.py`), and a
flipped expert gets a full share of the layer's output. `test_topk_flip_from_8bit_noise` shows
that mechanism on a tiny router.

Without a GPU the Triton kernels run in Triton's interpreter on CPU tensors (see tests/conftest.py).
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
from zinc.gguf.constants import GGMLType  # noqa: E402
from zinc.testing.compare import random_weight as weight  # noqa: E402
from zinc.testing.compare import rel_err as rel  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
D, HQ, HKV, DH, WINDOW = 2880, 64, 8, 64, 128  # gpt-oss-20b
Q8_TOL = 1.5e-2  # 8-bit activations against f32 math (measured ~5e-3)


@pytest.fixture(scope="module")
def ops():
    return CudaOps(device=DEVICE, graphs=False)


@pytest.fixture(scope="module")
def ref():
    return CpuOps()


def test_norm_then_q8_0_matvec_at_2880(ops, ref):
    """add_rms_norm quantizes its (1, 2880) output for the Q/K/V matvec (90 blocks: a partial program)."""
    rng = np.random.default_rng(0)
    x, r = (rng.standard_normal((1, D)).astype(np.float32) for _ in range(2))
    w = (1 + 0.05 * rng.standard_normal(D)).astype(np.float32)
    s, h = ops.add_rms_norm(ops.from_numpy(x), ops.from_numpy(r), ops.from_numpy(w), 1e-5)
    rs, rh = ref.add_rms_norm(x, r, w, 1e-5)
    assert rel(ops.to_numpy(s), rs) < 1e-6 and rel(ops.to_numpy(h), rh) < 1e-6
    qt = weight(GGMLType.Q8_0, (40, D), 3)
    y = ops.matmul(h, ops.upload(qt))
    assert rel(ops.to_numpy(y), ref.matmul(rh, ref.upload(qt))) < Q8_TOL


def test_decode_attention_sinks_window_then_q8_output(ops, ref):
    """One decode row, 64 query heads over 8 KV heads of 64, sinks, window 128, an f16 cache; its
    8-bit output (written by the combine kernel) feeds the K = 4096 output projection."""
    rng = np.random.default_rng(1)
    S, n = 160, 150  # past the window: the oldest cells are masked
    k = rng.standard_normal((S, HKV, DH)).astype(np.float16)
    v = rng.standard_normal((S, HKV, DH)).astype(np.float16)
    kv_pos = np.full(S, -1, np.int32)
    kv_pos[:n] = np.arange(n)
    q = (2 * rng.standard_normal((1, HQ, DH))).astype(np.float32)
    q_pos = np.array([n - 1], np.int32)
    sinks = rng.standard_normal(HQ).astype(np.float32)
    a = ops.attention(*(ops.from_numpy(t) for t in (q, k, v, q_pos, kv_pos)), n, 0.125, window=WINDOW,
                      sinks=ops.from_numpy(sinks))
    ra = ref.attention(q, k, v, q_pos, kv_pos, n, 0.125, window=WINDOW, sinks=sinks)
    assert rel(ops.to_numpy(a), ra) < 2e-3  # f16 query and probability operands, as llama.cpp's CUDA kernels
    qt = weight(GGMLType.Q8_0, (24, HQ * DH), 4)
    y = ops.matmul(a.reshape(1, HQ * DH), ops.upload(qt))
    assert rel(ops.to_numpy(y), ref.matmul(ra.reshape(1, -1), ref.upload(qt))) < Q8_TOL


def test_mxfp4_experts_at_2880(ops, ref):
    """The selected MXFP4 experts of one token (K = 2880) on 8-bit activations, then the down
    projection of the 4 clamped-SwiGLU outputs (x of shape (1, 4, K))."""
    rng = np.random.default_rng(2)
    qt = weight(GGMLType.MXFP4, (6, 8, D), 5)
    ids = np.array([[4, 0, 5, 2]], np.int32)
    for x in (rng.standard_normal((1, D)), rng.standard_normal((1, 4, D))):
        x = x.astype(np.float32)
        got = ops.matmul_experts(ops.from_numpy(x), ops.upload(qt), ops.from_numpy(ids))
        assert rel(ops.to_numpy(got), ref.matmul_experts(x, ref.upload(qt), ids)) < Q8_TOL


def q8_round_trip(x: np.ndarray) -> np.ndarray:
    """x as the decode matvecs see it: blocks of 32 on 8 bits (d = max|x| / 127, round half away)."""
    b = x.reshape(*x.shape[:-1], -1, 32)
    d = np.abs(b).max(-1, keepdims=True) / 127
    q = np.floor(np.abs(b) / np.where(d > 0, d, 1) + 0.5) * np.sign(b)
    return (q * d).reshape(x.shape).astype(np.float32)


def test_topk_flip_from_8bit_noise(ref):
    """The mechanism: a GPT-OSS router (F32, top-4 of 32 on raw logits, softmax over the winners)
    of random weights of the synthetic model's scale picks another expert for some tokens when its
    input carries 8-bit rounding, and a flipped expert takes a full share of the weight: the
    MoE output moves by O(1), not by the rounding's ~1%."""
    rng = np.random.default_rng(3)
    n_tok, E = 1024, 32
    h = rng.standard_normal((n_tok, D)).astype(np.float32)
    w_r = (2.0 / np.sqrt(D) * rng.standard_normal((E, D))).astype(np.float32)  # zinc.synth role_std("router")
    ids, w = ref.router_topk(h @ w_r.T, 4, "softmax_weight", False, 0.0)
    ids8, w8 = ref.router_topk(q8_round_trip(h) @ w_r.T, 4, "softmax_weight", False, 0.0)
    flipped = (np.sort(ids, 1) != np.sort(ids8, 1)).any(1)
    assert 0 < flipped.sum() < n_tok // 10  # a few tokens of a random router sit on a near-tie
    assert rel(q8_round_trip(h), h) < 1e-2
    assert np.median(w.min(1)[flipped]) > 0.05  # the expert that leaves (4th of 4) had a real share
