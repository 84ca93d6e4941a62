"""The CUDA backend's wider op coverage against the NumPy backend: more weight types, mixture of
experts, recurrent (Gated DeltaNet) layers, and every tiny model family end to end.

Without a GPU the Triton kernels run in Triton's interpreter (TRITON_INTERPRET=1, set here before
Triton is imported) on CPU tensors; with one they run on it. Skipped when torch or triton is missing.
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
from zinc.backends.cuda.ops import MMVQ_EXPERTS, CudaOps  # noqa: E402
from zinc.gguf.constants import GGMLType  # noqa: E402
from zinc.testing.compare import random_weight as weight  # noqa: E402
from zinc.testing.compare import rel_err as rel  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
T = GGMLType
NEW = [T.Q5_K, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.IQ4_NL, T.MXFP4]


@pytest.fixture(scope="module")
def ops():
    return CudaOps(device=DEVICE, graphs=False)


@pytest.fixture(scope="module")
def ref():
    return CpuOps()


def odd_k(t: GGMLType) -> int:
    """K-quants need whole 256-value blocks; 32-value block types get a partial last tile."""
    return 512 if t in (T.Q4_K, T.Q5_K, T.Q6_K) else 288


def rand(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# ------------------------------------------------------------------------------------ weight types


@pytest.mark.parametrize("t", NEW, ids=lambda t: t.name)
def test_dequant_bit_exact(ops, ref, t):
    qt = weight(t, (13, odd_k(t)), 3)
    w = ops.upload(qt)
    full = ops.to_numpy(ops.dequantize(w, torch.float32))
    assert np.array_equal(full, qt.dequantize())
    ids = np.array([12, 0, 5, 12, 7], np.int32)
    got = ops.to_numpy(ops.embed(w, ops.from_numpy(ids)))
    assert np.array_equal(got, ref.embed(ref.upload(qt), ids))


@pytest.mark.parametrize("t", NEW, ids=lambda t: t.name)
@pytest.mark.parametrize("rows", [1, 3, 7])
def test_matmul_new_types(ops, ref, t, rows):
    k = odd_k(t)
    qt = weight(t, (37, k), 10 + rows)
    x = rand(np.random.default_rng(rows), rows, k)
    got = ops.to_numpy(ops.matmul(ops.from_numpy(x), ops.upload(qt)))
    want = ref.matmul(x, ref.upload(qt))
    assert got.shape == want.shape and rel(got, want) < (2e-3 if rows > 4 else 1e-5)


@pytest.mark.parametrize("t", [T.Q4_K, T.Q6_K, T.Q8_0, T.Q5_0], ids=lambda t: t.name)
def test_generic_matvec_all_tiles(ops, t):
    """The generic matvec also runs the types that have a tuned kernel (MoE decode uses it for them)."""
    from zinc.backends.cuda.kernels import matvec_generic as kgm

    k = odd_k(t)
    qt = weight(t, (21, k), 4)
    x = rand(np.random.default_rng(4), 2, k)
    out = ops.zeros((2, 21), "f32")
    kgm.matvec(ops.from_numpy(x), ops.upload(qt).parts, int(t), 21, k, out, bn=8)
    assert rel(ops.to_numpy(out), x @ qt.dequantize().T) < 1e-5


# ------------------------------------------------------------------------------------ mixture of experts


@pytest.mark.parametrize("gating,norm_w,w_scale", [("softmax", True, 1.0), ("softmax", False, 2.5),
                                                   ("sigmoid", True, 1.0), ("softmax_weight", False, 1.0)])
def test_router_topk(ops, ref, gating, norm_w, w_scale):
    logits = rand(np.random.default_rng(5), 7, 11, scale=2.0)
    ids, w = ops.router_topk(ops.from_numpy(logits), 3, gating, norm_w, w_scale)
    rid, rw = ref.router_topk(logits, 3, gating, norm_w, w_scale)
    assert (ops.to_numpy(ids) == rid).all() and ops.to_numpy(ids).dtype == np.int32
    assert rel(ops.to_numpy(w), rw) < 1e-6


@pytest.mark.parametrize("t", [T.Q4_K, T.Q8_0, T.MXFP4, T.Q5_0, T.F16, T.F32], ids=lambda t: t.name)
@pytest.mark.parametrize("n_tok,x3", [(1, False), (3, True), (9, False), (9, True)])
def test_matmul_experts(ops, ref, t, n_tok, x3):
    E, N, k, nsel = 6, 19, odd_k(t), 2
    qt = weight(t, (E, N, k), 6)
    rng = np.random.default_rng(n_tok)
    ids = np.stack([rng.choice(E - 1, nsel, replace=False) for _ in range(n_tok)]).astype(np.int32)  # expert 5 unused
    x = rand(rng, n_tok, nsel, k) if x3 else rand(rng, n_tok, k)
    got = ops.to_numpy(ops.matmul_experts(ops.from_numpy(x), ops.upload(qt), ops.from_numpy(ids)))
    want = ref.matmul_experts(x, ref.upload(qt), ids)
    # mmvq types: the 8-bit-activation matvec over the pairs (small experts: at any token count);
    # others: f32 math for a few tokens, f16 GEMMs per expert for many
    tol = 2e-2 if t in MMVQ_EXPERTS else 1e-5 if n_tok <= 4 or t == T.F32 else 2e-3
    assert got.shape == want.shape and rel(got, want) < tol


def test_many_token_experts_path(ops):
    """The cost model without the grouped GEMM: many small experts (Qwen3.5-35B-A3B) take the matvec over
    (token, expert) pairs, few big ones (GPT-OSS 20B) the per-expert GEMMs; exact mode and other types the GEMMs.
    Both take the grouped GEMM at 8 or 4 pairs an expert; at 2 (or in exact mode) they do not."""
    from types import SimpleNamespace as W

    q35 = W(quantized=True, ggml_type=T.Q4_K, shape=(256, 512, 2048), nbytes=256 * 512 * 2048 * 144 // 256)
    oss = W(quantized=True, ggml_type=T.MXFP4, shape=(32, 5760, 2880), nbytes=32 * 5760 * 2880 * 17 // 32)
    assert ops._pairs_cheaper(q35, 512 * 8) and not ops._pairs_cheaper(oss, 512 * 4)
    assert not ops._pairs_cheaper(W(**{**q35.__dict__, "ggml_type": T.Q5_0}), 512 * 8)
    assert not CudaOps(device=DEVICE, graphs=False, exact=True)._pairs_cheaper(q35, 512 * 8)
    assert ops._gemm_experts(q35, 256 * 8) and ops._gemm_experts(oss, 32 * 4) and not ops._gemm_experts(q35, 256 * 2)
    assert not CudaOps(device=DEVICE, graphs=False, exact=True)._gemm_experts(q35, 512 * 8)


def test_capabilities_cover_experts(ops):
    caps = ops.capabilities()
    assert {T.Q4_K, T.Q5_K, T.Q6_K, T.Q8_0, T.MXFP4, T.Q4_0, T.Q5_0, T.F16} <= caps["matmul_experts"]
    assert set(NEW) <= caps["matmul"] and set(NEW) <= caps["embed"]


# ------------------------------------------------------------------------------------ recurrent layers


def delta_inputs(rng, n, Hk, Hv, S):
    def l2(x):
        return (x / np.sqrt((x.astype(np.float64) ** 2).sum(-1, keepdims=True) + 1e-6)).astype(np.float32)

    q, k, v = l2(rand(rng, n, Hk, S)), l2(rand(rng, n, Hk, S)), rand(rng, n, Hv, S)
    g = (-np.exp(rng.uniform(-3.0, 1.0, (n, Hv)))).astype(np.float32)
    beta = (1 / (1 + np.exp(-rand(rng, n, Hv)))).astype(np.float32)
    return q, k, v, g, beta


@pytest.mark.parametrize("n", [1, 5])
def test_conv1d_causal(ops, ref, n):
    rng = np.random.default_rng(20 + n)
    x, st, w = rand(rng, n, 23), rand(rng, 3, 23), rand(rng, 23, 4)
    dst = ops.from_numpy(st.copy())  # on a CPU device from_numpy shares memory
    addr = dst.data_ptr()
    got = ops.to_numpy(ops.conv1d_causal(ops.from_numpy(x), dst, ops.from_numpy(w)))
    want = ref.conv1d_causal(x, st, w)
    assert rel(got, want) < 1e-6 and rel(ops.to_numpy(dst), st) == 0.0 and dst.data_ptr() == addr


@pytest.mark.parametrize("n,chunk,Hk,Hv", [(1, 64, 2, 4), (3, 64, 2, 2), (37, 16, 2, 4), (19, 64, 1, 3)])
@pytest.mark.parametrize("form", ["recurrent", "chunked"])
def test_delta_net(ops, ref, n, chunk, Hk, Hv, form):
    rng = np.random.default_rng(30 + n)
    S = 8
    q, k, v, g, beta = delta_inputs(rng, n, Hk, Hv, S)
    st = rand(rng, Hv, S, S, scale=0.3)
    dst = ops.from_numpy(st.copy())  # on a CPU device from_numpy shares memory
    args = [ops.from_numpy(a) for a in (q, k, v, g, beta)]
    if form == "chunked":
        got = ops.delta_net_chunked(*args, dst, chunk=chunk)
    else:
        got = ops.delta_net_recurrent(*args, dst)
    want = ref.delta_net_recurrent(q, k, v, g, beta, st)  # the reference of both forms
    assert rel(ops.to_numpy(got), want) < 1e-5 and rel(ops.to_numpy(dst), st) < 1e-5


def test_recurrent_upload_accepted(ops):
    qt = weight(T.Q8_0, (4, 64), 1)
    qt = QTensor("blk.0.ssm_alpha.weight", qt.ggml_type, qt.shape, qt.data)
    assert ops.upload(qt).rows == 4


# ------------------------------------------------------------------------------------ tiny models end to end

# one file type per family, chosen so the interpreter runs the new kernels (the GPU script
# check_families.py runs every family at every file type); qwen35moe at Q4_K_M (stacked DeltaNet inputs,
# the experts' gate+up+GLU in one 8-bit matvec) on a GPU only: ~8 minutes in the interpreter, whose CI
# coverage of those ops is test_cuda_experts_glu.py and tests/models/test_stacked_projections.py
FAMILIES = [("qwen35-tiny", "F16"), ("qwen35moe-tiny", "Q5_0"), ("qwen3moe-tiny", "Q5_K_M"),
            ("gemma4moe-tiny", "Q4_0"), ("gemma4-tiny", "Q5_0"), ("gemma3-tiny", "F16"),
            ("gpt-oss-tiny", "MXFP4_MOE"),
            pytest.param("qwen35moe-tiny", "Q4_K_M", marks=pytest.mark.skipif(not torch.cuda.is_available(),
                                                                            reason="GPU only (slow in the interpreter)"))]


@pytest.mark.slow
@pytest.mark.parametrize("preset,ftype", FAMILIES)
def test_tiny_family(tmp_path, preset, ftype):
    """Prefill then decode steps on CudaOps against CpuOps: argmax where the reference is sure, KL."""
    from zinc.api import load
    from zinc.testing.compare import compare_logits
    from zinc.synth import write_model

    path = tmp_path / f"{preset}-{ftype}.gguf"
    write_model(str(path), preset, ftype=ftype, seed=1)
    ids = [int(i) for i in np.random.default_rng(2).integers(0, 500, 7)]
    want = load(path, backend=CpuOps(), n_ctx=32).logits(ids)
    m = load(path, backend=CudaOps(device=DEVICE, graphs=False), n_ctx=32)
    cache = m.new_cache(32)
    steps = [m.forward(ids[:5], cache)] + [m.forward([t], cache) for t in ids[5:]]
    got = compare_logits(np.concatenate(steps), want)
    assert got["argmax_agree"] == 1.0 and got["mean_kl"] < 1e-3, got
