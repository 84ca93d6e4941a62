"""KV cells stored as q8_0 (`Q8Cells`, kv_dtype "q8_0"): the NumPy backend's cells against ggml's q8_0 quantizer,
its attention against the same cells dequantized, and the CUDA backend's KV writes (bit for bit) and attention
kernels (decode split kernel with and without its rope + KV write, prefill flash) against the NumPy backend.

The CUDA tests run in Triton's interpreter without a GPU (TRITON_INTERPRET=1, set by conftest before Triton
is imported) and skip when torch or triton is missing.
"""

from __future__ import annotations

import numpy as np
import pytest

from zinc.backends.base import BaseOps, Q8Cells, RopeParams
from zinc.backends.cpu import CpuOps
from zinc.engine.cache import KVCache, LayerCacheSpec
from zinc.errors import BackendUnavailableError
from zinc.gguf.constants import GGMLType
from zinc.gguf.quants import quantize
from zinc.testing.compare import rel_err as rel

F = np.float32
# the f16 rounding of dequantized values in the CUDA kernels (kvq8.load): at most 2^-11 relative a value
TOL = 2e-3


@pytest.fixture(scope="module")
def ref():
    return CpuOps()


@pytest.fixture(scope="module")
def ops():
    torch = pytest.importorskip("torch")
    pytest.importorskip("triton")
    from zinc.backends.cuda.ops import CudaOps

    return CudaOps(device="cuda" if torch.cuda.is_available() else "cpu", graphs=False)


def _dequant(c: Q8Cells) -> np.ndarray:
    return c.q.astype(F) * np.repeat(c.d.astype(F), 32, axis=-1)


def _filled(ref, rng, S, H, D, DV, n, holes=()):
    """q8_0 K and V cells with tokens 0 .. n-1 in cells 0 .. n-1 (positions -1 at `holes`)."""
    ck, cv = ref.kv_cells((S, H, D), "q8_0"), ref.kv_cells((S, H, DV), "q8_0")
    cp = np.full(S, -1, np.int32)
    k, v = (3 * rng.standard_normal((n, H, D))).astype(F), rng.standard_normal((n, H, DV)).astype(F)
    ref.kv_write(ck, cv, cp, k, v, np.arange(n, dtype=np.int32), np.arange(n))
    cp[list(holes)] = -1
    return ck, cv, cp


def _to(ops, c: Q8Cells) -> Q8Cells:
    return Q8Cells(ops.from_numpy(c.q), ops.from_numpy(c.d))


def _np(ops, c: Q8Cells) -> Q8Cells:
    return Q8Cells(ops.to_numpy(c.q), ops.to_numpy(c.d))


def test_cpu_cells_are_ggml_q8_0(ref):
    rng = np.random.default_rng(1)
    S, H, D = 9, 3, 64
    ck, cv = ref.kv_cells((S, H, D), "q8_0"), ref.kv_cells((S, H, 32), "q8_0")
    assert ck.q.dtype == np.int8 and ck.d.shape == (S, H, 2) and ck.shape == (S, H, D)
    k = (rng.standard_normal((4, H, D)) * rng.uniform(0.01, 50, (4, H, 1))).astype(F)
    k[1, 2, :32] = 0.0  # a block of zeros: scale 0
    v = rng.standard_normal((4, H, 32)).astype(F)
    cp = np.full(S, -1, np.int32)
    slots = np.array([7, 0, 3, 5])
    ref.kv_write(ck, cv, cp, k, v, np.arange(10, 14, dtype=np.int32), slots)
    raw = quantize(k.reshape(-1, D), GGMLType.Q8_0).reshape(-1, 34)  # ggml's blocks: f16 scale, 32 int8
    np.testing.assert_array_equal(ck.d[slots].reshape(-1), raw[:, :2].copy().view(np.float16).reshape(-1))
    np.testing.assert_array_equal(ck.q[slots].reshape(-1), raw[:, 2:].copy().view(np.int8).reshape(-1))
    assert list(cp[[7, 0, 3, 5, 1]]) == [10, 11, 12, 13, -1]
    assert np.abs(_dequant(cv)[slots] - v).max() <= np.abs(v).max() / 127  # within half a step of the block
    assert np.all(ck.q[1] == 0) and np.all(ck.d[1] == 0)  # untouched cells stay empty


def test_cpu_attention_reads_the_dequantized_cells(ref):
    rng = np.random.default_rng(2)
    ck, cv, cp = _filled(ref, rng, 30, 2, 64, 32, 25, holes=(4, 9))
    q = rng.standard_normal((3, 6, 64)).astype(F)
    q_pos = np.arange(22, 25, dtype=np.int32)
    want = ref.attention(q, _dequant(ck), _dequant(cv), q_pos, cp, 25, 0.125, window=7, sinks=np.ones(6, F))
    got = ref.attention(q, ck, cv, q_pos, cp, 25, 0.125, window=7, sinks=np.ones(6, F))
    np.testing.assert_array_equal(got, want)


def test_kv_types_are_checked():
    class NoQ8(BaseOps):
        name = "toy"

        def zeros(self, shape, dtype):
            return np.zeros(shape, np.float32)

    with pytest.raises(BackendUnavailableError, match="toy backend stores KV cells as f32 or f16, not 'q8_0'"):
        KVCache(NoQ8(), [LayerCacheSpec(2, 64, 64)], 8, dtype="q8_0")
    with pytest.raises(BackendUnavailableError, match="multiples of 32, got 40"):
        KVCache(CpuOps(), [LayerCacheSpec(2, 40, 40)], 8, dtype="q8_0")
    with pytest.raises(ValueError, match="kv_dtype"):
        CpuOps(kv_dtype="q4_0")
    c = KVCache(CpuOps(kv_dtype="q8_0"), [LayerCacheSpec(2, 64, 32), None], 8, dtype="q8_0")
    assert c.nbytes == 8 * 2 * (64 + 32) * 34 // 32  # 32 int8 and one f16 scale a block


@pytest.mark.parametrize("T,slots", [(1, [4]), (3, [0, 6, 2])])
def test_cuda_kv_write_matches_numpy(ops, ref, T, slots):
    rng = np.random.default_rng(T)
    S, H, D, DV = 7, 3, 96, 64  # D = 96: three blocks, padded to four in the kernel
    k, v = (rng.standard_normal((T, H, D)) * 4).astype(F), rng.standard_normal((T, H, DV)).astype(F)
    k[0, 0, :6] = [127.0, 2.5, -3.5, 0.5, -0.5, 126.5]  # scale 1: ties, which round away from zero
    pos = np.arange(20, 20 + T, dtype=np.int32)
    want = ref.kv_cells((S, H, D), "q8_0"), ref.kv_cells((S, H, DV), "q8_0"), np.full(S, -1, np.int32)
    got = ops.kv_cells((S, H, D), "q8_0"), ops.kv_cells((S, H, DV), "q8_0"), ops.full((S,), -1, "i32")
    ref.kv_write(*want, k, v, pos, np.array(slots))
    ops.kv_write(*got, ops.from_numpy(k), ops.from_numpy(v), ops.from_numpy(pos), ops.from_numpy(np.array(slots,
                                                                                                       np.int32)))
    assert list(want[0].q[slots[0], 0, :6]) == [127, 3, -4, 1, -1, 127]
    for w, g in zip(want[:2], got[:2]):
        np.testing.assert_array_equal(ops.to_numpy(g.q), w.q)
        np.testing.assert_array_equal(ops.to_numpy(g.d), w.d)
    np.testing.assert_array_equal(ops.to_numpy(got[2]), want[2])


# T, Hq, Hkv, D, DV, S, n_kv, window, softcap: up to 16 rows the decode kernels, more the prefill one
ATTN = [(1, 6, 2, 64, 32, 53, 41, 0, 0.0), (4, 8, 2, 32, 64, 40, 33, 5, 0.0), (2, 4, 4, 96, 96, 30, 30, 0, 20.0),
        (20, 6, 2, 64, 32, 53, 41, 0, 0.0), (24, 4, 1, 32, 32, 40, 40, 9, 0.0)]


@pytest.mark.parametrize("case", ATTN, ids=lambda c: "T{}-h{}x{}-d{}x{}".format(*c[:5]))
def test_cuda_attention_on_q8_cells(ops, ref, case):
    T, Hq, Hkv, D, DV, S, n_kv, window, cap = case
    rng = np.random.default_rng(sum(case[:7]))
    ck, cv, cp = _filled(ref, rng, S, Hkv, D, DV, n_kv, holes=rng.choice(n_kv - T, 2, replace=False))
    q = rng.standard_normal((T, Hq, D)).astype(F)
    q_pos = np.arange(n_kv - T, n_kv, dtype=np.int32)
    want = ref.attention(q, ck, cv, q_pos, cp, n_kv, 0.2, window=window, softcap=cap)
    C = ops.from_numpy
    for n in (n_kv, S):  # a captured graph passes every cell
        got = ops.attention(C(q), _to(ops, ck), _to(ops, cv), C(q_pos), C(cp), n, 0.2, window=window, softcap=cap)
        err = rel(ops.to_numpy(got), want)
        assert err < (TOL if T <= 16 else 3e-3), (n, err)  # past 16 rows the prefill kernel: f16 Q and P operands


@pytest.mark.parametrize("T,norms", [(1, True), (3, False)])
def test_cuda_rope_qk_attention_writes_q8_cells(ops, ref, monkeypatch, T, norms):
    """The decode split kernel's own rope + KV write into q8_0 cells, over several splits."""
    import zinc.backends.cuda.ops as cuda_ops

    monkeypatch.setattr(cuda_ops, "ATTN_SPLITS", [(1 << 62, 5, 16)])
    monkeypatch.setattr(cuda_ops, "ATTN_SPLITS_WIDE", cuda_ops.ATTN_SPLITS)  # cards of either bandwidth
    rng = np.random.default_rng(7 + T)
    S, P0, Hq, Hk, Dh, Dv = 70, 50, 6, 2, 64, 32
    ck, cv, cp = _filled(ref, rng, S, Hk, Dh, Dv, P0)
    q, k, v = (rng.standard_normal(s).astype(F) for s in ((T, Hq, Dh), (T, Hk, Dh), (T, Hk, Dv)))
    qw, kw = (rng.standard_normal(Dh).astype(F) if norms else None for _ in range(2))
    pos = np.arange(P0, P0 + T, dtype=np.int32)
    p = RopeParams(Dh, "neox", 1e4)
    C = ops.from_numpy
    gk, gv, gp = _to(ops, ck), _to(ops, cv), C(cp)
    want = ref.rope_qk_attention(q, k, v, pos, p, None, ck, cv, cp, pos, S, 0.3, q_norm=qw, k_norm=kw, eps=1e-6)
    got = ops.rope_qk_attention(C(q), C(k), C(v), C(pos), p, None, gk, gv, gp, C(pos), S, 0.3,
                                q_norm=None if qw is None else C(qw), k_norm=None if kw is None else C(kw), eps=1e-6)
    assert rel(ops.to_numpy(got), want) < TOL
    for w, g in ((ck, gk), (cv, gv)):  # the new cells: the rope's f32 rounding may move a value by one step
        gq = _np(ops, g)
        assert np.abs(_dequant(gq) - _dequant(w)).max() <= 1.01 * np.repeat(w.d.astype(F), 32, axis=-1).max()
        assert np.mean(gq.q == w.q) > 0.99 and rel(gq.d.astype(F), w.d.astype(F)) < 1e-3
    np.testing.assert_array_equal(ops.to_numpy(gp), cp)


@pytest.mark.parametrize("fused", ["rope_qk_kv_write", "norm_rope_kv_write"])
def test_cuda_rope_kv_write_into_q8_cells(ops, ref, fused):
    """The other cache writers (prefill and families that scale Q): the rope kernels, then the q8_0 write."""
    rng = np.random.default_rng(11)
    T, Hq, Hk, Dh, Dv, S = 5, 4, 2, 32, 64, 9
    q, k, v = (rng.standard_normal(s).astype(F) for s in ((T, Hq, Dh), (T, Hk, Dh), (T, Hk, Dv)))
    w = rng.standard_normal(Dh).astype(F)
    pos, slots = np.arange(3, 3 + T, dtype=np.int32), np.array([8, 1, 2, 6, 0], np.int32)
    p = RopeParams(Dh, "norm", 1e4)
    want = ref.kv_cells((S, Hk, Dh), "q8_0"), ref.kv_cells((S, Hk, Dv), "q8_0"), np.full(S, -1, np.int32)
    got = ops.kv_cells((S, Hk, Dh), "q8_0"), ops.kv_cells((S, Hk, Dv), "q8_0"), ops.full((S,), -1, "i32")
    C = ops.from_numpy
    if fused == "rope_qk_kv_write":
        wq = ref.rope_qk_kv_write(q, k, v, pos, p, None, *want, slots, q_norm=w, k_norm=w, eps=1e-6)
        gq = ops.rope_qk_kv_write(C(q), C(k), C(v), C(pos), p, None, *got, C(slots), q_norm=C(w), k_norm=C(w),
                                  eps=1e-6)
        assert rel(ops.to_numpy(gq), wq) < 1e-5
    else:
        ref.norm_rope_kv_write(k, w, 1e-6, v, pos, p, None, *want, slots)
        ops.norm_rope_kv_write(C(k), C(w), 1e-6, C(v), C(pos), p, None, *got, C(slots))
    for wc, gc in zip(want[:2], got[:2]):
        g = _np(ops, gc)
        assert np.abs(_dequant(g) - _dequant(wc)).max() <= 1.01 * np.repeat(wc.d.astype(F), 32, axis=-1).max()
        assert np.mean(g.q == wc.q) > 0.99
    np.testing.assert_array_equal(ops.to_numpy(got[2]), want[2])


def test_vulkan_refuses_q8_0_cells_by_name():
    pytest.importorskip("wgpu")
    from zinc.backends.vulkan import VulkanOps

    with pytest.raises(BackendUnavailableError, match="vulkan backend stores KV cells as f32 or f16, not 'q8_0'"):
        VulkanOps(kv_dtype="q8_0")  # refused before any adapter is looked for
