"""The CUDA backend's Triton kernels against the NumPy backend, on tiny odd shapes.

Without a GPU the kernels run in Triton's interpreter (TRITON_INTERPRET=1, set here before Triton
is imported) on CPU tensors; with one they run on it. Skipped when torch or triton is missing.
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
from zinc.backends.cuda.ops import MATVEC_MAX_ROWS, PDL_NEEDS, CudaOps, pdl_available  # noqa: E402
from zinc.gguf.constants import GGMLType  # noqa: E402
from zinc.testing.compare import random_weight as weight  # noqa: E402
from zinc.testing.compare import rel_err as rel  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
QUANTS = [GGMLType.Q4_K, GGMLType.Q6_K, GGMLType.Q8_0, GGMLType.F16, GGMLType.F32]


@pytest.fixture(scope="module")
def ops():
    return CudaOps(device=DEVICE, graphs=False)


@pytest.fixture(scope="module")
def ref():
    return CpuOps()


@pytest.mark.parametrize("t", QUANTS, ids=lambda t: t.name)
@pytest.mark.parametrize("rows", [1, 3, 7])
def test_matmul(ops, ref, t, rows):
    k = 288 if t == GGMLType.Q8_0 else 512  # Q8_0: K not a multiple of 256
    qt = weight(t, (37, k), rows)
    x = np.random.default_rng(100 + rows).standard_normal((rows, k)).astype(np.float32)
    got = ops.to_numpy(ops.matmul(ops.from_numpy(x), ops.upload(qt)))
    want = ref.matmul(x, ref.upload(qt))
    # f16 GEMM for many rows; 8-bit activations (kernels/mmvq.py) for a few rows of a quantized weight
    tol = 2e-3 if rows > 4 or t == GGMLType.F16 else 1e-5 if t == GGMLType.F32 else 2e-2
    assert got.shape == want.shape and rel(got, want) < tol


@pytest.mark.parametrize("t", QUANTS[:3] + [GGMLType.MXFP4], ids=lambda t: t.name)
@pytest.mark.parametrize("rows", [5, 33, 70])
def test_matmul_tiles_gemm(ops, ref, monkeypatch, t, rows):
    """5-128 rows of a `kq.SUB64` type: one GEMM over dequantized tiles (`CudaOps._gemm_tiles`; a batched decode
    step), the matmul and the gate / up GLU, against the NumPy backend."""
    k = 288 if t == GGMLType.Q8_0 else 512
    wg, wu = weight(t, (37, k), rows), weight(t, (37, k), rows + 1)
    assert ops._tiles_gemm(ops.upload(wg), rows)
    x = np.random.default_rng(200 + rows).standard_normal((rows, k)).astype(np.float32)
    dx, dg, du = ops.from_numpy(x), ops.upload(wg), ops.upload(wu)
    assert rel(ops.to_numpy(ops.matmul(dx, dg)), ref.matmul(x, ref.upload(wg))) < 2e-3
    want = ref.matmul_glu(x, ref.upload(wg), ref.upload(wu), "silu")
    assert rel(ops.to_numpy(ops.matmul_glu(dx, dg, du, "silu")), want) < 2e-3
    from zinc.backends.cuda.kernels import moe as kmoe  # K split in chunks of whole 64-blocks, partials summed

    ids = ops.from_numpy(np.zeros((rows, 1), np.int32))
    sems = torch.zeros(64, dtype=torch.int32, device=DEVICE)
    for splits in (2, 4):
        for swap in (False, True):
            kw = dict(bm=16, bn=32, splits=splits, swap=swap)
            got = kmoe.experts_gemm(dx, dg.parts, int(t), 1, 37, k, ids, **kw)[:, 0]
            assert rel(ops.to_numpy(got), ref.matmul(x, ref.upload(wg))) < 2e-3
            # the splits summed in the launch by each tile's last split (counters left zero: the same twice)
            for _ in range(2):
                serial = kmoe.experts_gemm(dx, dg.parts, int(t), 1, 37, k, ids, sems=sems, **kw)[:, 0]
                assert not sems.any() and rel(ops.to_numpy(serial), ops.to_numpy(got)) < 1e-6
    from zinc.backends.cuda import ops as cuda_ops  # and so through the backend (its counters)

    from zinc.backends.cuda.kernels.elementwise import GLU_ACTS

    for splits in (1, 3):  # the products also stored in f16 (`out16`): one split's, the split sums', the GLU's
        for glu in (None, (du.parts, GLU_ACTS["silu"])):
            for counters in ((None, sems) if glu else (None,)):
                half = torch.full((rows, 37), 7.0, dtype=torch.float16, device=DEVICE)
                got = kmoe.experts_gemm(dx, dg.parts, int(t), 1, 37, k, ids, glu=glu, bm=16, bn=32, splits=splits,
                                        sems=counters, out16=half)[:, 0]
                assert torch.equal(half, got.half())
    plain = ops.matmul(dx, dg)
    monkeypatch.setattr(cuda_ops, "SPLIT_SUMS_IN_LAUNCH", True)
    assert rel(ops.to_numpy(ops.matmul(dx, dg)), ops.to_numpy(plain)) < 1e-6 and not ops._sems.any()


@pytest.mark.parametrize("n,k,rows", [(37, 288, 1), (5, 4128, 3), (130, 1024, 4), (1, 32, 2)])
@pytest.mark.parametrize("act", [None, "silu", "gelu", "swiglu_oai"])
def test_q8_0_matvec_f32_activations(ref, n, k, rows, act):
    """A few rows of a Q8_0 weight (and gate + up + GLU in one launch) on the f32 activations (`q8_matvec`, what
    exact=True runs), in the configurations a GPU runs and the interpreter's, against the NumPy backend to f32
    accuracy."""
    from zinc.backends.cuda.kernels import matvec_generic as kgm
    from zinc.backends.cuda.kernels.elementwise import GLU_ACTS

    ops = CudaOps(device=DEVICE, graphs=False, exact=True)
    wg, wu = weight(GGMLType.Q8_0, (n, k), n + k), weight(GGMLType.Q8_0, (n, k), n + k + 1)
    x = np.random.default_rng(n * k + rows).standard_normal((rows, k)).astype(np.float32)
    want = ref.matmul(x, ref.upload(wg)) if act is None else ref.matmul_glu(x, ref.upload(wg), ref.upload(wu), act)
    tol = 2e-3 if act == "gelu" else 1e-5  # the reference's GELU goes through an f16 table
    dx, dg, du = ops.from_numpy(x), ops.upload(wg), ops.upload(wu)
    got = ops.matmul(dx, dg) if act is None else ops.matmul_glu(dx, dg, du, act)
    assert rel(ops.to_numpy(got), want) < tol
    for cfg in [(2, 1024, 4), (1, 512, 2), (4, 64, 1)]:
        out = torch.full((rows, n), float("nan"), device=DEVICE)
        kgm.q8_matvec(dx, dg.parts, n, k, out, cfg=cfg, glu=None if act is None else (du.parts, GLU_ACTS[act]))
        assert rel(ops.to_numpy(out), want) < tol, cfg


@pytest.mark.parametrize("t", QUANTS[:3], ids=lambda t: t.name)
def test_embed_and_dequant(ops, ref, t):
    qt = weight(t, (19, 256), 7)
    ids = np.array([3, 0, 18, 3, 11], np.int32)
    got = ops.to_numpy(ops.embed(ops.upload(qt), ops.from_numpy(ids)))
    assert rel(got, ref.embed(ref.upload(qt), ids)) < 1e-6
    full = ops.to_numpy(ops.dequantize(ops.upload(qt), torch.float32))
    assert rel(full, qt.dequantize()) < 1e-6


@pytest.mark.parametrize("with_w", [True, False])
def test_rms_norm(ops, ref, with_w):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 5, 48)).astype(np.float32)
    w = rng.standard_normal(48).astype(np.float32) if with_w else None
    got = ops.rms_norm(ops.from_numpy(x), ops.from_numpy(w) if with_w else None, 1e-6)
    assert rel(ops.to_numpy(got), ref.rms_norm(x, w, 1e-6)) < 1e-6


@pytest.mark.parametrize("mode,n_dims", [("neox", 16), ("norm", 16), ("neox", 12), ("imrope", 16)])
def test_rope(ops, ref, mode, n_dims):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 3, 16)).astype(np.float32)
    pos = np.array([0, 1, 7, 30, 101], np.int32)
    ff = (1.0 + rng.random(n_dims // 2)).astype(np.float32)
    p = RopeParams(n_dims=n_dims, mode=mode, freq_base=10000.0, freq_scale=0.5,
                   ext_factor=1.0 if mode == "norm" else 0.0, n_ctx_orig=64,
                   sections=(2, 2, 2, 2) if mode == "imrope" else ())
    got = ops.rope(ops.from_numpy(x), ops.from_numpy(pos), p, ops.from_numpy(ff))
    assert rel(ops.to_numpy(got), ref.rope(x, pos, p, ff)) < 1e-5


@pytest.mark.parametrize("act", ["silu", "gelu", "swiglu_oai"])
def test_glu(ops, ref, act):
    rng = np.random.default_rng(3)
    g, u = (rng.standard_normal((3, 1037)).astype(np.float32) * 4 for _ in range(2))
    got = ops.to_numpy(ops.glu(ops.from_numpy(g), ops.from_numpy(u), act))
    tol = 2e-3 if act == "gelu" else 1e-6  # the reference's GELU goes through an f16 table
    assert rel(got, ref.glu(g, u, act)) < tol


def _cache(rng, S, Hkv, D, n_kv, dtype):
    k = rng.standard_normal((S, Hkv, D)).astype(dtype)
    v = rng.standard_normal((S, Hkv, D)).astype(dtype)
    kv_pos = np.full(S, -1, np.int32)
    kv_pos[:n_kv] = np.arange(n_kv)
    return k, v, kv_pos


@pytest.mark.parametrize("T,window,softcap,sinks", [(1, 0, 0.0, False), (3, 0, 0.0, False), (1, 5, 0.0, False),
                                                    (2, 0, 30.0, True), (20, 0, 0.0, False), (20, 7, 20.0, True)])
def test_attention(ops, ref, T, window, softcap, sinks):
    """Through `ops.attention`: up to 16 rows take the decode kernels, more the prefill path (f16)."""
    rng = np.random.default_rng(4 + T)
    Hq, Hkv, D, S, n_kv = 6, 2, 24, 53, 41
    k, v, kv_pos = _cache(rng, S, Hkv, D, n_kv, np.float16)
    q = rng.standard_normal((T, Hq, D)).astype(np.float32)
    q_pos = np.arange(n_kv - T, n_kv, dtype=np.int32)
    snk = rng.standard_normal(Hq).astype(np.float32) if sinks else None
    args = dict(window=window, softcap=softcap)
    want = ref.attention(q, k, v, q_pos, kv_pos, n_kv, 0.2, sinks=snk, **args)
    got = ops.attention(*(ops.from_numpy(a) for a in (q, k, v, q_pos, kv_pos)), n_kv, 0.2,
                        sinks=None if snk is None else ops.from_numpy(snk), **args)
    assert rel(ops.to_numpy(got), want) < (2e-3 if T <= 16 else 3e-3)  # f16 operands (decode), f16 (prefill)


# T, Hq, Hkv, D, DV, S, n_kv, window, softcap, sinks, cache dtype, splits, cells per block, exact, ring
DECODE = [(1, 6, 2, 24, 24, 53, 41, 0, 0.0, False, np.float16, 4, 16, True, False),
          (1, 5, 5, 40, 17, 97, 90, 0, 0.0, False, np.float16, 3, 32, True, False),  # R = 1, D != DV
          (3, 8, 2, 24, 24, 70, 70, 5, 0.0, False, np.float16, 5, 16, True, False),
          (16, 6, 2, 16, 24, 77, 60, 0, 30.0, True, np.float16, 7, 32, True, False),  # 48 rows in one block
          (5, 8, 2, 20, 300, 40, 33, 0, 0.0, True, np.float16, 11, 16, True, False),  # wide V: 2 row blocks
          (2, 4, 2, 24, 24, 53, 41, 7, 20.0, False, np.float32, 4, 16, True, False),  # f32 cache
          (4, 6, 3, 24, 24, 61, 50, 0, 0.0, False, np.float16, 4, 16, False, False),  # plain f16 operands
          (1, 8, 2, 128, 128, 130, 129, 0, 0.0, False, np.float16, 4, 32, False, False),  # Qwen3-8B's dims, f16 ones
          (1, 4, 1, 256, 256, 75, 75, 9, 0.0, True, np.float16, 3, 16, False, True),  # head dim 256, ring, f16 ones
          (2, 6, 2, 24, 24, 37, 37, 9, 0.0, True, np.float16, 3, 16, True, True),  # wrapped ring cache
          (9, 16, 2, 64, 64, 40, 40, 12, 0.0, True, np.float16, 2, 32, True, False),  # 72 rows: blocks of 64 + 8
          (1, 8, 1, 512, 512, 45, 40, 0, 0.0, False, np.float16, 2, 128, True, False),  # BS clipped to 32
          # one split: the split program writes the output (no combine)
          (1, 6, 2, 24, 24, 53, 41, 0, 0.0, True, np.float16, 1, 16, True, False),
          (3, 8, 2, 24, 24, 70, 70, 5, 20.0, False, np.float16, 1, 16, False, False),
          (2, 6, 2, 24, 24, 37, 37, 9, 0.0, True, np.float32, 1, 16, True, True)]


def _decode_kernel(q, k, v, q_pos, kv_pos, n, scale, window, cap, sinks, nsplit, bs, exact, stages=None,
                   cluster=0):
    """`decode_attention` on fresh torch tensors, returning a NumPy (T, Hq, DV)."""
    from zinc.backends.cuda.kernels import attention as kattn

    dev = lambda a: torch.from_numpy(np.ascontiguousarray(a)).to(DEVICE)  # noqa: E731
    T, Hq, _ = q.shape
    dv = v.shape[2]
    out = torch.empty((T, Hq, dv), dtype=torch.float32, device=DEVICE)
    scratch = (torch.empty(T * Hq * nsplit, device=DEVICE), torch.empty(T * Hq * nsplit, device=DEVICE),
               torch.empty((T * Hq * nsplit, dv), device=DEVICE))
    kattn.decode_attention(dev(q), dev(k), dev(v), dev(q_pos), dev(kv_pos), n, scale, window, cap,
                           None if sinks is None else dev(sinks), scratch, out, nsplit=nsplit, bs=bs, exact=exact,
                           cluster=cluster, **({} if stages is None else {"stages": stages}))
    return out.cpu().numpy()


def _decode_inputs(ref, case, seed):
    """Fresh random inputs of a DECODE case (holes among the cells, or a wrapped ring) and the NumPy backend's
    attention over them: (q, k, v, q_pos, kv_pos, sinks, want)."""
    T, Hq, Hkv, D, DV, S, n_kv, window, cap, sinks, dtype, nsplit, bs, exact, ring = case
    rng = np.random.default_rng(seed)
    k = rng.standard_normal((S, Hkv, D)).astype(dtype)
    v = rng.standard_normal((S, Hkv, DV)).astype(dtype)
    kv_pos = np.full(S, -1, np.int32)
    if ring:  # positions 0 .. P-1 written at p % S: the cache wrapped
        P = 3 * S + 5
        kv_pos[np.arange(P - S, P) % S] = np.arange(P - S, P)
    else:
        kv_pos[:n_kv] = np.arange(n_kv)
        kv_pos[rng.choice(n_kv - T, 3, replace=False)] = -1  # holes
        P = n_kv
    q_pos = np.arange(P - T, P, dtype=np.int32)
    q = (2 * rng.standard_normal((T, Hq, D))).astype(np.float32)
    snk = rng.standard_normal(Hq).astype(np.float32) if sinks else None
    want = ref.attention(q, k, v, q_pos, kv_pos, n_kv, 0.3, window=window, softcap=cap, sinks=snk)
    return q, k, v, q_pos, kv_pos, snk, want


@pytest.mark.parametrize("stages", [None, 0], ids=["pipelined", "unrolled"])
@pytest.mark.parametrize("case", DECODE, ids=lambda c: "T{}-h{}x{}-d{}x{}-{}".format(*c[:5], c[10].__name__))
def test_decode_attention_kernel(ref, case, stages):
    """The tensor-core decode kernels at odd shapes: empty cells, extents read on the device, ring caches; the
    split loop pipelined, or unrolled at the trip count of a full cache (stages 0: steps past the extent masked)."""
    S, n_kv, window, cap = case[5:9]
    nsplit, bs, exact = case[11:14]
    q, k, v, q_pos, kv_pos, snk, want = _decode_inputs(ref, case, sum(case[:8]))
    for n in (n_kv, S):  # a captured graph passes every cell: the extent then comes from q_pos
        got = _decode_kernel(q, k, v, q_pos, kv_pos, n, 0.3, window, cap, snk, nsplit, bs, exact, stages)
        assert got.shape == want.shape and rel(got, want) < (1e-5 if exact else 2e-3)


@pytest.mark.parametrize("case", [c for c in DECODE if 2 <= c[11] <= 16],
                         ids=lambda c: "T{}-h{}x{}-d{}x{}-s{}".format(*c[:5], c[11]))
def test_decode_attention_cluster(ref, case):
    """The splits merged by their own programs (`decode_attention(cluster=nsplit)`: on a GPU one thread-block cluster
    a row block, merging after a cluster barrier; in the interpreter `merge_kernel` after the split launch): the
    same outputs as the split + combine launches, and the reference's."""
    S, n_kv, window, cap = case[5:9]
    nsplit, bs, exact = case[11:14]
    q, k, v, q_pos, kv_pos, snk, want = _decode_inputs(ref, case, sum(case[:8]) + 1)
    for n in (n_kv, S):
        got = _decode_kernel(q, k, v, q_pos, kv_pos, n, 0.3, window, cap, snk, nsplit, bs, exact, cluster=nsplit)
        base = _decode_kernel(q, k, v, q_pos, kv_pos, n, 0.3, window, cap, snk, nsplit, bs, exact)
        assert rel(got, want) < (1e-5 if exact else 2e-3)
        assert np.allclose(got, base, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("T,Hq,Hkv,D,nsplit", [(1, 4, 2, 32, 3), (3, 6, 2, 64, 5), (2, 2, 1, 128, 2), (1, 8, 2, 64, 1),
                                               (3, 6, 3, 32, 1)])
def test_decode_attention_q8_output(T, Hq, Hkv, D, nsplit):
    """The combine's 8-bit copy of its output (for the output projection), a whole head or 32 dims a program, or
    with one split the split program's: the quantization of that f32 output (`mmvq.quantize_x`), at heads of one
    to four blocks."""
    from zinc.backends.cuda.kernels import attention as kattn
    from zinc.backends.cuda.kernels import mmvq

    rng = np.random.default_rng(T * 100 + D)
    S = 37
    dev = lambda a: torch.from_numpy(np.ascontiguousarray(a)).to(DEVICE)  # noqa: E731
    k = dev(rng.standard_normal((S, Hkv, D)).astype(np.float16))
    v = dev(rng.standard_normal((S, Hkv, D)).astype(np.float16))
    kv_pos = dev(np.arange(S, dtype=np.int32))
    q_pos = dev(np.arange(S - T, S, dtype=np.int32))
    q = dev((2 * rng.standard_normal((T, Hq, D))).astype(np.float32))
    out = torch.empty((T, Hq, D), dtype=torch.float32, device=DEVICE)
    scratch = (torch.empty(T * Hq * nsplit, device=DEVICE), torch.empty(T * Hq * nsplit, device=DEVICE),
               torch.empty((T * Hq * nsplit, D), device=DEVICE))
    outs = []
    for dc, cluster in ((D, 0), (32, 0), (0, nsplit)):  # cluster: the splits merge in place (1 split: as is)
        q8 = mmvq.q8_buffers(T, Hq * D, DEVICE)
        kattn.decode_attention(q, k, v, q_pos, kv_pos, S, 0.3, 0, 0.0, None, scratch, out, nsplit=nsplit, bs=16,
                               exact=False, q8=q8, combine_dims=dc, cluster=cluster)
        want = mmvq.quantize_x(out.reshape(T, Hq * D).contiguous())
        for got, w in zip(q8, want):
            assert torch.equal(got.cpu(), w.cpu())
        outs.append(out.cpu().clone())
    assert torch.allclose(outs[0], outs[1], rtol=1e-6, atol=1e-6)
    assert torch.allclose(outs[0], outs[2], rtol=1e-6, atol=1e-6)


@pytest.mark.skipif(not pdl_available(torch.device("cuda")), reason=f"programmatic dependent launch needs {PDL_NEEDS}")
@pytest.mark.parametrize("nsplit", [3, 16])
def test_decode_attention_pdl_same_results(nsplit):
    """The split and combine launches as the backend's programmatic dependent launches (`ops.ATTN_PDL`: the combine
    launched once the splits leave their loop, waiting for them before any load) and as plain launches, each behind
    a kernel that writes the query (so a launch that read too early would see the old one): the same outputs and
    8-bit copies, bit for bit."""
    from zinc.backends.cuda import ops as cops
    from zinc.backends.cuda.kernels import attention as kattn
    from zinc.backends.cuda.kernels import mmvq

    rng = np.random.default_rng(nsplit)
    T, Hq, Hkv, D, S = 1, 8, 2, 128, 1000
    dev = lambda a: torch.from_numpy(np.ascontiguousarray(a)).to(DEVICE)  # noqa: E731
    k = dev(rng.standard_normal((S, Hkv, D)).astype(np.float16))
    v = dev(rng.standard_normal((S, Hkv, D)).astype(np.float16))
    kv_pos = dev(np.arange(S, dtype=np.int32))
    q_pos = dev(np.full(T, S - 1, np.int32))
    q0 = dev((2 * rng.standard_normal((T, Hq, D))).astype(np.float32))
    scratch = (torch.empty(T * Hq * nsplit, device=DEVICE), torch.empty(T * Hq * nsplit, device=DEVICE),
               torch.empty((T * Hq * nsplit, D), device=DEVICE))
    got = []
    for pdl in (((0, 0), (0, 0)), cops.ATTN_PDL):
        q = torch.zeros_like(q0)
        out = torch.full((T, Hq, D), float("nan"), device=DEVICE)
        q8 = mmvq.q8_buffers(T, Hq * D, DEVICE)
        torch.add(q0, 0.0, out=q)  # the query written by the launch right before the split
        kattn.decode_attention(q, k, v, q_pos, kv_pos, S, 0.3, 0, 0.0, None, scratch, out, nsplit=nsplit, bs=64,
                               exact=False, q8=q8, pdl=pdl)
        torch.cuda.synchronize()
        got.append([out.cpu(), *(a.cpu() for a in q8)])
    assert torch.isfinite(got[0][0]).all()
    for a, b in zip(*got):
        assert torch.equal(a, b)


def test_kv_write_and_argmax(ops, ref):
    rng = np.random.default_rng(5)
    ck, cv = ops.zeros((9, 2, 4), "f16"), ops.zeros((9, 2, 4), "f16")
    cp = ops.full((9,), -1, "i32")
    k, v = rng.standard_normal((2, 2, 4)).astype(np.float32), rng.standard_normal((2, 2, 4)).astype(np.float32)
    pos, slots = np.array([10, 11], np.int32), np.array([1, 2], np.int32)
    ops.kv_write(ck, cv, cp, ops.from_numpy(k), ops.from_numpy(v), ops.from_numpy(pos), ops.from_numpy(slots))
    assert np.allclose(ops.to_numpy(ck)[1:3], k, atol=1e-3) and list(ops.to_numpy(cp)[:4]) == [-1, 10, 11, -1]
    x = rng.standard_normal((3, 77)).astype(np.float32)
    assert (ops.to_numpy(ops.argmax(ops.from_numpy(x))) == ref.argmax(x)).all()


@pytest.mark.parametrize("n", [1, 77, 4096, 9001])
def test_greedy_next(n):
    """The greedy graph's end: argmax (first index of the max, across the first pass's blocks too) into the
    token, position + 1, the id appended at count, count + 1; three steps in a row."""
    from zinc.backends.cuda.kernels import elementwise as kel

    rng = np.random.default_rng(n)
    tokens, pos = torch.zeros(1, dtype=torch.int32, device=DEVICE), torch.tensor([41], dtype=torch.int32, device=DEVICE)
    chosen, count = torch.full((5,), -7, dtype=torch.int32, device=DEVICE), torch.ones(1, dtype=torch.int64, device=DEVICE)
    want = []
    for step in range(3):
        x = rng.standard_normal(n).astype(np.float32)
        if step == 1 and n > 3:  # a tie between two blocks' values (and two of one block): the first one wins
            top = x.max() + 1
            x[[n // 3, n - 1, n - 2]] = top
        want.append(int(np.argmax(x)))
        kel.greedy_next(torch.from_numpy(x).to(DEVICE), tokens, pos, chosen, count, block=64 if n > 1000 else 4096)
    assert int(tokens.cpu()[0]) == want[-1] and int(pos.cpu()[0]) == 44 and int(count.cpu()[0]) == 4
    assert chosen.cpu().tolist() == [-7, *want, -7]


@pytest.mark.parametrize("s,m", [(2, 5), (4, 1024), (8, 3001)])
def test_split_sum(ops, s, m):
    """`moe.split_sum`: the K-splits' slices added in split order (bit for bit the same as NumPy's f32 adds in that
    order), in f16 too when asked; sizes off the program's block."""
    from zinc.backends.cuda.kernels.moe import split_sum

    parts = np.random.default_rng(s * m).standard_normal((s, 3, m)).astype(np.float32)
    want = parts[0].copy()
    for i in range(1, s):
        want += parts[i]
    half = torch.zeros((3, m), dtype=torch.float16, device=DEVICE)
    got = split_sum(ops.from_numpy(parts), half)
    assert np.array_equal(ops.to_numpy(got), want) and torch.equal(half, got.half())
    assert np.array_equal(ops.to_numpy(split_sum(ops.from_numpy(parts))), want)


def test_add_rms_norm(ops, ref):
    rng = np.random.default_rng(6)
    x, r = rng.standard_normal((3, 40)).astype(np.float32), rng.standard_normal((3, 40)).astype(np.float32)
    w = rng.standard_normal(40).astype(np.float32)
    s, y = ops.add_rms_norm(ops.from_numpy(x), ops.from_numpy(r), ops.from_numpy(w), 1e-5)
    ws, wy = ref.add_rms_norm(x, r, w, 1e-5)
    assert rel(ops.to_numpy(s), ws) < 1e-7 and rel(ops.to_numpy(y), wy) < 1e-6


@pytest.mark.parametrize("rows", [3, 33])
def test_norm_half_copy_feeds_tiles(ops, ref, monkeypatch, rows):
    """A norm of a tile GEMM's rows (MATVEC_MAX_ROWS + 1 to GEMM_TILES_MAX_ROWS) also stores its output in f16
    (`CudaOps._half_for_tiles`), which the GEMMs of that output read (x rounded once, not by each); fewer rows (the
    matvecs') or other inputs take none."""
    rng = np.random.default_rng(9 + rows)
    x, r = (rng.standard_normal((rows, 512)).astype(np.float32) for _ in range(2))
    w = rng.standard_normal(512).astype(np.float32)
    qt = weight(GGMLType.Q4_K, (37, 512), rows)
    ops._x16 = None
    s, y = ops.add_rms_norm(ops.from_numpy(x), ops.from_numpy(r), ops.from_numpy(w), 1e-5)
    ws, wy = ref.add_rms_norm(x, r, w, 1e-5)
    assert rel(ops.to_numpy(s), ws) < 1e-7 and rel(ops.to_numpy(y), wy) < 1e-6
    if rows <= MATVEC_MAX_ROWS:
        assert ops._x16 is None
        return
    assert ops._same_memory(ops._x16[0], y) and torch.equal(ops._x16[1], y.half())
    from zinc.backends.cuda.kernels import moe as kmoe

    seen, gemm = [], kmoe.experts_gemm
    monkeypatch.setattr(kmoe, "experts_gemm", lambda x, *a, **kw: seen.append(x.dtype) or gemm(x, *a, **kw))
    dw = ops.upload(qt)
    got = ops.to_numpy(ops.matmul(y, dw))
    assert rel(got, ref.matmul(wy, ref.upload(qt))) < 2e-3
    ops._x16 = None  # the same product rounding x in the GEMM
    assert np.array_equal(got, ops.to_numpy(ops.matmul(y, dw))) and seen == [torch.float16, torch.float32]
    other = y.clone()  # the same values elsewhere, while the kept copy is another norm's: rounded in the GEMM
    z = ops.rms_norm(ops.from_numpy(x), None, 1e-6)
    assert ops._same_memory(ops._x16[0], z) and np.array_equal(ops.to_numpy(ops.matmul(other, dw)), got) and seen[2] == torch.float32


def test_glu_half_copy_feeds_down(ops, ref, monkeypatch):
    """The tile GEMM's gate + up at a batched step's rows also stores its output in f16 (`_x16`), which the down
    projection's tile GEMM reads: the same products as rounding in the GEMM."""
    from zinc.backends.cuda.kernels import moe as kmoe

    rows = 33
    x = np.random.default_rng(77).standard_normal((rows, 512)).astype(np.float32)
    wg, wu = (ops.upload(weight(GGMLType.Q4_K, (256, 512), rows + i)) for i in range(2))
    a = ops.matmul_glu(ops.from_numpy(x), wg, wu, "silu")
    assert ops._same_memory(ops._x16[0], a) and torch.equal(ops._x16[1], a.half())
    seen, gemm = [], kmoe.experts_gemm
    monkeypatch.setattr(kmoe, "experts_gemm", lambda x, *a, **kw: seen.append(x.dtype) or gemm(x, *a, **kw))
    qd = weight(GGMLType.Q4_K, (40, 256), rows + 5)
    wd = ops.upload(qd)
    got = ops.to_numpy(ops.matmul(a, wd))
    ops._x16 = None
    assert np.array_equal(got, ops.to_numpy(ops.matmul(a, wd))) and seen == [torch.float16, torch.float32]
    assert rel(got, ref.matmul(ops.to_numpy(a), ref.upload(qd))) < 2e-3


def test_kv_write_from_pos(ops):
    """While a graph is captured the cell comes from the position (pos % cells)."""
    rng = np.random.default_rng(8)
    ck, cv, cp = ops.zeros((5, 2, 3), "f16"), ops.zeros((5, 2, 3), "f16"), ops.full((5,), -1, "i32")
    k, v = rng.standard_normal((1, 2, 3)).astype(np.float32), rng.standard_normal((1, 2, 3)).astype(np.float32)
    ops.capturing = True
    try:
        ops.kv_write(ck, cv, cp, ops.from_numpy(k), ops.from_numpy(v), ops.from_numpy(np.array([13], np.int32)), None)
    finally:
        ops.capturing = False
    assert np.allclose(ops.to_numpy(cv)[3], v[0], atol=1e-3) and list(ops.to_numpy(cp)) == [-1, -1, -1, 13, -1]


@pytest.mark.parametrize("mode,n_dims,has_w", [("neox", 16, True), ("norm", 12, True), ("neox", 20, False)])
def test_norm_rope_and_kv_write(ops, ref, mode, n_dims, has_w):
    """The fused per-head norm + rope (+ K/V cache write) kernel against the NumPy ops one by one."""
    rng = np.random.default_rng(n_dims)
    T, H, D = 3, 5, 20
    x = rng.standard_normal((T, H, D)).astype(np.float32)
    v = rng.standard_normal((T, H, 8)).astype(np.float32)
    w = rng.standard_normal(D).astype(np.float32) if has_w else None
    pos = np.array([7, 8, 9], np.int32)
    p = RopeParams(n_dims, mode, 1e4)
    tw = ops.from_numpy(w) if has_w else None
    want = ref.rope(ref.rms_norm(x, w, 1e-6), pos, p)
    got = ops.norm_rope(ops.from_numpy(x), tw, 1e-6, ops.from_numpy(pos), p)
    assert rel(ops.to_numpy(got), want) < 1e-5
    assert rel(ops.to_numpy(ops.rope(ops.from_numpy(x), ops.from_numpy(pos), p)), ref.rope(x, pos, p)) < 1e-5
    ck, cv, cp = ops.zeros((6, H, D), "f16"), ops.zeros((6, H, 8), "f16"), ops.full((6,), -1, "i32")
    slots = np.array([4, 5, 0], np.int32)
    got = ops.norm_rope_kv_write(ops.from_numpy(x), tw, 1e-6, ops.from_numpy(v), ops.from_numpy(pos), p, None,
                                 ck, cv, cp, ops.from_numpy(slots))
    assert rel(ops.to_numpy(got), want) < 1e-5
    assert np.allclose(ops.to_numpy(ck)[slots].astype(np.float32), want, atol=2e-3 * np.abs(want).max())
    assert np.allclose(ops.to_numpy(cv)[slots].astype(np.float32), v, atol=2e-3 * np.abs(v).max())
    assert list(ops.to_numpy(cp)) == [9, -1, -1, -1, 7, 8]


import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from zinc.backends.cuda.kernels import elementwise as kel  # noqa: E402
from zinc.backends.cuda.kernels import quant as kquant  # noqa: E402


@triton.jit
def _cos_sin_kernel(th, c, s, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    m = o < n
    cv, sv = kel.cos_sin(tl.load(th + o, mask=m, other=0.0))
    tl.store(c + o, cv, mask=m)
    tl.store(s + o, sv, mask=m)


def test_cos_sin_rounds_once():
    """The rope kernels' cos / sin (reduced by pi/2 in f64, Taylor series) against NumPy's f64 cos / sin of the same
    f32 angles: within half an f32 ulp of the result (plus 1e-9 for the last f64 roundings), small angles, rope-sized
    ones (position x frequency) up to 2e5, large and negative ones, and the quadrant edges (multiples of pi/4)."""
    rng = np.random.default_rng(11)
    pos = rng.integers(0, 200_000, 700)
    freq = 10000.0 ** -(rng.integers(0, 64, 700) / 64)
    th = np.concatenate([rng.uniform(-8, 8, 301), (pos * freq).astype(np.float32), rng.uniform(-1e6, 1e6, 150),
                         np.arange(-40, 41) * np.pi / 4]).astype(np.float32)
    n = len(th)
    c, s = torch.empty(n, device=DEVICE), torch.empty(n, device=DEVICE)
    _cos_sin_kernel[(triton.cdiv(n, 256),)](torch.from_numpy(th).to(DEVICE), c, s, n, B=256)
    for got, want in ((c, np.cos(th.astype(np.float64))), (s, np.sin(th.astype(np.float64)))):
        got = got.cpu().numpy()
        err = np.abs(got.astype(np.float64) - want)
        assert np.all(err <= 0.5 * np.spacing(np.abs(want).astype(np.float32)) + 1e-9), err.max()


@pytest.mark.parametrize("n_vocab,k", [(1000, 128), (77, 128), (5003, 1)])
def test_top_logits(ops, ref, n_vocab, k):
    """The best k logits of each row, their ids and the row's log-sum-exp (what sampling takes from the device)
    against the NumPy backend's; a row with a masked (-inf) token keeps it out of the best."""
    x = np.random.default_rng(n_vocab).standard_normal((3, n_vocab)).astype(np.float32) * 3
    x[1, 5] = -np.inf
    got, want = ops.top_logits(ops.from_numpy(x), k), ref.top_logits(x, k)
    assert got[0].shape == want[0].shape == (3, min(k, n_vocab)) and got[1].dtype == np.int64
    assert np.array_equal(got[1], want[1]) and np.allclose(got[0], want[0], atol=0)
    assert np.allclose(got[2], want[2], rtol=1e-6) and 5 not in got[1][1][:n_vocab - 1]


SAMPLE_SETTINGS = [  # (temperature, top_k, top_p, min_p, min_keep)
    (0.8, 40, 0.95, 0.05, 0), (1.0, 128, 1.0, 0.0, 0), (0.3, 5, 0.5, 0.0, 0), (1.5, 60, 0.9, 0.2, 3),
    (2.0, 100, 0.99, 0.0, 0), (0.7, 1, 1.0, 0.0, 0), (1.0, 20, 0.2, 0.5, 7), (0.0, 40, 0.95, 0.05, 0)]
WHOLE_ROW_SETTINGS = [(1.0, 0, 1.0, 0.0, 0), (0.7, 0, 1.0, 0.05, 0), (1.3, 0, 1.0, 0.0, 1), (0.5, 0, 1.0, 0.0, 0)]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (the NaN rows)
@pytest.mark.parametrize("n_vocab,whole", [(300, False), (1031, False), (300, True), (1031, True)])
def test_sample_next(n_vocab, whole):
    """A step's token drawn on the device (kernels/sample.py) equals `Sampler.sample`'s from the whole row with
    the same uniform draw, for llama.cpp's defaults and other settings (greedy among them; with `whole`, rows with
    top-k off too: an OpenAI client's default, the whole row in id order over several blocks); ties between values
    (the lower id first), -0.0 against +0.0, -inf logits; a NaN / +inf / all -inf row gives -1 (and token 0);
    two steps, so the draws and the chosen row follow the count."""
    from zinc.backends.cuda.kernels import sample as ksample
    from zinc.engine.sampler import Sampler, SamplingParams

    rng = np.random.default_rng(n_vocab)
    settings = SAMPLE_SETTINGS + (WHOLE_ROW_SETTINGS if whole else [])
    rows = len(settings)
    params = [SamplingParams(temperature=t, top_k=k, top_p=p, min_p=m, min_keep=keep)
              for t, k, p, m, keep in settings]
    samplers = [Sampler(p, n_vocab) for p in params]
    dev = np.array([s.device_row() for s in samplers], np.float64)
    fp, ip = ksample.rows_params(dev, DEVICE)
    steps = 2
    u = torch.from_numpy(rng.random((steps, rows))).to(DEVICE)
    tokens = torch.zeros(rows, dtype=torch.int32, device=DEVICE)
    pos = torch.arange(rows, dtype=torch.int32, device=DEVICE)
    chosen = torch.full((steps + 1, rows), -7, dtype=torch.int32, device=DEVICE)
    count = torch.zeros(1, dtype=torch.int64, device=DEVICE)
    want = []
    for step in range(steps):
        x = (rng.standard_normal((rows, n_vocab)) * 2.5).astype(np.float32)
        x[0, 3:9] = x[0].max() + 0.5  # a tie among the best (lowest id first)
        x[1, 17], x[1, 11] = np.float32(-0.0), np.float32(0.0)
        x[1, :40] += 8  # 40 values near the top, equal pairs among them
        x[1, 20:30] = x[1, 20]
        x[2, ::3] = -np.inf
        x[6, 50:] = -np.inf  # fewer finite logits than top_k's 20 after top-p.. (50 left)
        if step == 1:
            x[3, 7], x[4, 8], x[5] = np.nan, np.inf, -np.inf
        if whole:  # the whole-row rows: ties, -inf, an even spread
            x[8, 100:110] = x[8].max()
            x[9, ::2] = -np.inf
            x[10] = np.linspace(-3, 3, n_vocab, dtype=np.float32)
        w = []
        for r, s in enumerate(samplers):
            s.rng = _FixedDraw(float(u[step, r]))
            try:
                w.append(s.sample(x[r])[0])
            except ValueError:
                w.append(-1)
        want.append(w)
        ksample.sample_next(torch.from_numpy(x).to(DEVICE), 128, fp, ip, u, tokens, pos, chosen, count, full=whole,
                            block=128)
    assert want[1][3:6] == [-1, -1, -1]
    assert chosen.cpu().tolist() == [*want, [-7] * rows]
    assert tokens.cpu().tolist() == [max(t, 0) for t in want[-1]]
    assert pos.cpu().tolist() == [r + steps for r in range(rows)] and int(count.cpu()[0]) == steps


class _FixedDraw:
    def __init__(self, u: float) -> None:
        self.u = u

    def random(self) -> float:
        return self.u


@triton.jit
def _nibbles_kernel(q, lo, hi, R: tl.constexpr, C: tl.constexpr, ASM: tl.constexpr):
    o = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    a, b = kquant.nibbles_f16(tl.load(q + o), ASM)
    tl.store(lo + o, a)
    tl.store(hi + o, b)


@pytest.mark.parametrize("asm", [False, True], ids=["int32", "ptx"])
@pytest.mark.parametrize("shape", [(16, 32), (4, 64), (2, 128)])
def test_nibbles_f16(asm, shape):
    """`quant.nibbles_f16` (the tile GEMM's Q4_K values): each byte's low and high nibbles as f16, exactly, every
    byte value in shuffled places, in tiles of several widths (which bytes one PTX instance gets is Triton's
    choice); the PTX form only on a GPU (the interpreter runs no PTX)."""
    if asm and DEVICE != "cuda":
        pytest.skip("the PTX form needs a GPU")
    rng = np.random.default_rng(sum(shape) + asm)
    q = rng.permutation(np.resize(np.arange(256, dtype=np.uint8), shape[0] * shape[1])).reshape(shape)
    lo = torch.full(shape, -1.0, dtype=torch.float16, device=DEVICE)
    hi = torch.full(shape, -1.0, dtype=torch.float16, device=DEVICE)
    _nibbles_kernel[(1,)](torch.from_numpy(q).to(DEVICE), lo, hi, R=shape[0], C=shape[1], ASM=asm)
    assert (lo.cpu().numpy() == (q & 15)).all() and (hi.cpu().numpy() == (q >> 4)).all()


@triton.jit
def _six_bits_kernel(ql, qh, out, s, t, R: tl.constexpr, C: tl.constexpr, ASM: tl.constexpr):
    o = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    tl.store(out + o, kquant.six_bits_f16(tl.load(ql + o), tl.load(qh + o), s, t, ASM))


@pytest.mark.parametrize("asm", [False, True], ids=["int32", "ptx"])
@pytest.mark.parametrize("shape", [(16, 32), (4, 64)])
def test_six_bits_f16(asm, shape):
    """`quant.six_bits_f16` (the tile GEMM's Q6_K values): ((ql >> s) & 15) | ((qh >> t) & 3) << 4, minus 32, as f16,
    exactly, for every shift the tiles use, random bytes; the PTX form only on a GPU."""
    if asm and DEVICE != "cuda":
        pytest.skip("the PTX form needs a GPU")
    rng = np.random.default_rng(sum(shape) + asm)
    ql, qh = (rng.integers(0, 256, shape, dtype=np.uint8) for _ in range(2))
    for s, t in ((0, 0), (0, 2), (4, 4), (4, 6)):
        out = torch.full(shape, 99.0, dtype=torch.float16, device=DEVICE)
        _six_bits_kernel[(1,)](torch.from_numpy(ql).to(DEVICE), torch.from_numpy(qh).to(DEVICE), out, s, t,
                               R=shape[0], C=shape[1], ASM=asm)
        want = (((ql >> s) & 15) | (((qh >> t) & 3) << 4)).astype(np.float32) - 32
        assert (out.cpu().numpy() == want).all(), (s, t)
