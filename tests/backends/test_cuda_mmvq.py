"""The 8-bit-activation decode matvec (`kernels.mmvq`) against NumPy, on fresh random inputs.

Two references: the same arithmetic in float64 (activations quantized like the kernel: blocks of
32, d = max|x| / 127, round half away from zero) must agree to ~1e-6; the plain f32 dot must agree
to the activation quantization's ~1e-2. Runs in Triton's interpreter without a GPU.
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
from zinc.backends.cuda.kernels import mmvq  # noqa: E402
from zinc.backends.cuda.ops import PDL_NEEDS, pdl_available  # noqa: E402
from zinc.backends.cuda.weights import CudaWeight  # noqa: E402
from zinc.gguf.constants import GGMLType  # noqa: E402
from zinc.gguf.quants import random_blocks  # noqa: E402
from zinc.testing.compare import rel_err as rel  # noqa: E402

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def quantize_ref(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(q int (T, K), d (T, K/32)) as `mmvq.quantize_kernel` computes them."""
    b = x.astype(np.float32).reshape(x.shape[0], -1, 32)
    amax = np.abs(b).max(axis=2)
    d = (amax / np.float32(127)).astype(np.float32)
    s = b / np.where(amax > 0, d, np.float32(1))[..., None]
    q = np.sign(s) * np.floor(np.abs(s) + np.float32(0.5))
    return q.reshape(x.shape).astype(np.int64), d


@pytest.mark.parametrize("k", [256, 768])
def test_quantize_x(k):
    rng = np.random.default_rng(k)
    x = (rng.standard_normal((3, k)) * rng.uniform(0.1, 10, (3, 1))).astype(np.float32)
    x[1, 32:64] = 0.0  # an all-zero block
    xq, xd, xs = mmvq.quantize_x(torch.from_numpy(x).to(DEVICE))
    q, d = quantize_ref(x)
    got = xq.cpu().numpy().view(np.int8).reshape(3, k).astype(np.int64)
    np.testing.assert_array_equal(got, q)
    np.testing.assert_array_equal(xd.cpu().numpy()[..., 0], d)
    sums = q.reshape(3, -1, 16).sum(axis=2) * np.repeat(d, 2, axis=1)
    np.testing.assert_allclose(xs.cpu().numpy(), sums, rtol=1e-6, atol=0)
    np.testing.assert_allclose(xd.cpu().numpy()[..., 1], q.reshape(3, -1, 32).sum(axis=2) * d, rtol=1e-6, atol=0)


CASES = [(GGMLType.Q4_K, 7, 512), (GGMLType.Q4_K, 33, 768), (GGMLType.Q6_K, 9, 512), (GGMLType.Q6_K, 5, 1280),
         (GGMLType.Q8_0, 11, 96), (GGMLType.Q8_0, 6, 544)]


@pytest.mark.parametrize("t,n,k", CASES, ids=lambda v: getattr(v, "name", str(v)))
@pytest.mark.parametrize("rows", [1, 3])
def test_matvec(t, n, k, rows):
    rng = np.random.default_rng(n * k + rows)
    qt = QTensor("w", t, (n, k), random_blocks(t, n * k, rng, scale=0.05))
    w = qt.dequantize().astype(np.float64)
    x = rng.standard_normal((rows, k)).astype(np.float32)
    cw = CudaWeight(qt, DEVICE)
    out = torch.empty((rows, n), dtype=torch.float32, device=DEVICE)
    xqt = mmvq.quantize_x(torch.from_numpy(x).to(DEVICE))
    for cfg in [None, (4, 2, 2, 1), (1, 4, 1, 2), (2, 1, 4, 3)]:  # None: mmvq.config's (Q4_K, Q6_K: V 2)
        mmvq.matvec(xqt, cw.parts, int(t), n, k, out, cfg=cfg)
        got = out.cpu().numpy()
        q, d = quantize_ref(x)
        xdq = q.reshape(rows, -1, 32) * d[..., None].astype(np.float64)  # the activations the kernel sees
        assert rel(got, xdq.reshape(rows, k) @ w.T) < 2e-6, cfg
        assert rel(got, x.astype(np.float64) @ w.T) < 2e-2, cfg


@pytest.mark.parametrize("t,n,k", [(GGMLType.Q4_K, 13, 768), (GGMLType.Q4_K, 6, 2048), (GGMLType.Q6_K, 7, 1280),
                                   (GGMLType.Q6_K, 5, 4096)], ids=lambda v: getattr(v, "name", str(v)))
def test_matvec_row_streams(t, n, k):
    """V 2 (rows as streams, kernels/mmvs.py): R rows a program (1, 2, 4; N not a multiple), units per thread,
    warps and unrolling whose steps do not always divide the row (masked), and a GLU of one and two rows."""
    from zinc.backends.cpu import CpuOps
    from zinc.backends.cuda.kernels.elementwise import GLU_ACTS

    rng = np.random.default_rng(n * k + 11)
    qt, qu = (QTensor(f"w{i}", t, (n, k), random_blocks(t, n * k, rng, scale=0.05)) for i in range(2))
    w = qt.dequantize().astype(np.float64)
    x = rng.standard_normal((2, k)).astype(np.float32)
    xqt = mmvq.quantize_x(torch.from_numpy(x).to(DEVICE))
    q, d = quantize_ref(x)
    xdq = (q.reshape(2, -1, 32) * d[..., None].astype(np.float64)).reshape(2, k)
    cw, cu = CudaWeight(qt, DEVICE), CudaWeight(qu, DEVICE)
    for cfg in [(1, 1, 1, 1, 1, 2, 1), (2, 1, 2, 1, 1, 2, 1), (2, 1, 2, 1, 1, 2, 2), (4, 2, 1, 1, 1, 2, 2),
                (4, 1, 1, 1, 1, 2, 3)]:
        out = torch.full((2, n), float("nan"), dtype=torch.float32, device=DEVICE)
        mmvq.matvec(xqt, cw.parts, int(t), n, k, out, cfg=cfg)
        assert rel(out.cpu().numpy(), xdq @ w.T) < 2e-6, cfg
    x32 = xdq.astype(np.float32)
    want = CpuOps().glu(x32 @ qt.dequantize().T, x32 @ qu.dequantize().T, "silu")
    for cfg in [(1, 1, 1, 1, 1, 2, 1), (2, 2, 1, 1, 1, 2, 2), (2, 1, 2, 1, 1, 2, 1), (2, 1, 2, 1, 1, 2, 2)]:
        out = torch.full((2, n), float("nan"), dtype=torch.float32, device=DEVICE)
        mmvq.matvec(xqt, cw.parts, int(t), n, k, out, cfg=cfg, glu=(cu.parts, GLU_ACTS["silu"]))
        assert rel(out.cpu().numpy(), want) < 1e-5, cfg


@pytest.mark.parametrize("ta,na,tb,nb,k", [(GGMLType.Q4_K, 13, GGMLType.Q6_K, 7, 768),
                                            (GGMLType.Q6_K, 37, GGMLType.Q4_K, 5, 1280),
                                            (GGMLType.Q4_K, 9, GGMLType.Q4_K, 3, 2048)])
@pytest.mark.parametrize("rows", [1, 3])
def test_matvec_pair(ta, na, tb, nb, k, rows, monkeypatch):
    """Two weights of one input in one launch (`mmvq.matvec_pair`, `CudaOps.matmuls`), each at its own
    configuration (rows a program, units a thread, unrolling; odd row counts): each output as its own matvec."""
    from zinc.backends.cuda.kernels import mmvs

    rng = np.random.default_rng(na * nb + k + rows)
    qa = QTensor("a", ta, (na, k), random_blocks(ta, na * k, rng, scale=0.05))
    qb = QTensor("b", tb, (nb, k), random_blocks(tb, nb * k, rng, scale=0.05))
    x = rng.standard_normal((rows, k)).astype(np.float32)
    xqt = mmvq.quantize_x(torch.from_numpy(x).to(DEVICE))
    q, d = quantize_ref(x)
    xdq = (q.reshape(rows, -1, 32) * d[..., None].astype(np.float64)).reshape(rows, k)
    ca, cb = CudaWeight(qa, DEVICE), CudaWeight(qb, DEVICE)
    for cfa, cfb in [((2, 1, 1, 1), (4, 2, 1, 2)), ((1, 2, 1, 2), (2, 1, 1, 1)), ((4, 1, 2, 3), (1, 1, 2, 1))]:
        ya = torch.full((rows, na), float("nan"), dtype=torch.float32, device=DEVICE)
        yb = torch.full((rows, nb), float("nan"), dtype=torch.float32, device=DEVICE)
        mmvs.launch_pair(xqt, (mmvq.words(ca.parts, int(ta), True), int(ta), na, ya, cfa),
                         (mmvq.words(cb.parts, int(tb), True), int(tb), nb, yb, cfb))
        assert rel(ya.cpu().numpy(), xdq @ qa.dequantize().astype(np.float64).T) < 2e-6, (cfa, cfb)
        assert rel(yb.cpu().numpy(), xdq @ qb.dequantize().astype(np.float64).T) < 2e-6, (cfa, cfb)
    from zinc.backends.cuda.ops import CudaOps
    ops = CudaOps(device=DEVICE, graphs=False)
    xt = torch.from_numpy(x).to(DEVICE)
    pairs = []
    launch = mmvs.launch_pair
    monkeypatch.setattr(mmvs, "launch_pair", lambda *a, **k: pairs.append((a[1][4], a[2][4])) or launch(*a, **k))
    ya, yb = ops.matmuls(xt, [ca, cb])
    assert len(pairs) == 1  # one launch for the two
    assert rel(ya.cpu().numpy(), ops.matmul(xt, ca).cpu().numpy()) < 1e-6
    assert rel(yb.cpu().numpy(), ops.matmul(xt, cb).cpu().numpy()) < 1e-6
    monkeypatch.setattr(mmvq, "PAIR_UNROLL", (2, 2))  # the halves at two units a thread, unrolled twice
    ya, yb = ops.matmuls(xt, [ca, cb])
    assert len(pairs) == 2 and all((c[1], c[3]) == (2, 2) for c in pairs[1])
    assert rel(ya.cpu().numpy(), ops.matmul(xt, ca).cpu().numpy()) < 1e-6
    assert rel(yb.cpu().numpy(), ops.matmul(xt, cb).cpu().numpy()) < 1e-6


@pytest.mark.parametrize("k,res,has_w", [(4096, True, True), (2880, True, True), (96, False, True), (160, True, False)])
def test_norm_quantize(k, res, has_w):
    """The fused RMS norm (+ residual) then quantize: the norm as elementwise.rms_norm, then quantize_x."""
    rng = np.random.default_rng(k)
    x, r = rng.standard_normal((2, k)).astype(np.float32), rng.standard_normal((2, k)).astype(np.float32)
    w = rng.standard_normal(k).astype(np.float32)
    tx, tr, tw = (torch.from_numpy(a).to(DEVICE) for a in (x, r, w))
    out, s = torch.empty_like(tx), torch.empty_like(tx)
    xq, xd, xs = mmvq.norm_quantize(tx, tw if has_w else None, 1e-6, out, res=tr if res else None,
                                    sum_out=s if res else None)
    v = (x + r if res else x).astype(np.float64)
    want = v / np.sqrt((v * v).mean(axis=1, keepdims=True) + 1e-6) * (w if has_w else 1.0)
    assert rel(out.cpu().numpy(), want) < 1e-6
    if res:
        np.testing.assert_array_equal(s.cpu().numpy(), x + r)
    ref = mmvq.quantize_x(out)
    for a, b in zip((xq, xd, xs), ref):
        np.testing.assert_array_equal(a.cpu().numpy(), b.cpu().numpy())


@pytest.mark.parametrize("t", [GGMLType.Q4_K, GGMLType.Q8_0], ids=lambda v: v.name)
@pytest.mark.parametrize("act", ["silu", "gelu", "swiglu_oai"])
def test_matvec_glu(t, act):
    """Gate and up in one kernel: act(x . W_gate) * (x . W_up), as the NumPy backend's glu."""
    from zinc.backends.cpu import CpuOps
    from zinc.backends.cuda.kernels.elementwise import GLU_ACTS

    n, k = 19, 512
    rng = np.random.default_rng(len(act))
    wg, wu = (QTensor(f"w{i}", t, (n, k), random_blocks(t, n * k, rng, scale=0.05)) for i in range(2))
    x = rng.standard_normal((2, k)).astype(np.float32)
    xqt = mmvq.quantize_x(torch.from_numpy(x).to(DEVICE))
    out = torch.empty((2, n), dtype=torch.float32, device=DEVICE)
    mmvq.matvec(xqt, CudaWeight(wg, DEVICE).parts, int(t), n, k, out, cfg=(2, 4, 1, 1),
                glu=(CudaWeight(wu, DEVICE).parts, GLU_ACTS[act]))
    q, d = quantize_ref(x)
    xdq = (q.reshape(2, -1, 32) * d[..., None].astype(np.float64)).reshape(2, k).astype(np.float32)
    cpu = CpuOps()
    want = cpu.glu(xdq @ wg.dequantize().T, xdq @ wu.dequantize().T, act)
    assert rel(out.cpu().numpy(), want) < (1e-3 if act == "gelu" else 1e-5)  # NumPy: llama.cpp's f16 GELU table


@pytest.mark.parametrize("T,hq,hkv,dv,softcap", [(1, 4, 2, 64, 0.0), (3, 6, 3, 32, 20.0), (4, 2, 1, 128, 0.0)])
def test_attention_output_quantized_in_combine(T, hq, hkv, dv, softcap):
    """Decode attention writes its output's 8-bit form (the combine kernel) exactly as quantize_x
    would, and the output projection finds it through the reshaped view."""
    from zinc.backends.cuda.ops import CudaOps

    ops = CudaOps(device=DEVICE.type, graphs=False)
    rng = np.random.default_rng(T + dv)
    S, n = 37, 29
    k, v = (rng.standard_normal((S, hkv, dv)).astype(np.float16) for _ in range(2))
    kv_pos = np.where(np.arange(S) < n, np.arange(S), -1).astype(np.int32)
    q = rng.standard_normal((T, hq, dv)).astype(np.float32)
    q_pos = np.arange(n - T, n, dtype=np.int32)
    out = ops.attention(*(ops.from_numpy(a) for a in (q, k, v, q_pos, kv_pos)), n, 0.2, softcap=softcap)
    assert ops._qx and ops._qx[0][0] is out
    a = out.reshape(T, hq * dv)
    want = mmvq.quantize_x(a.contiguous().clone())
    got = ops._quantized(a, a)
    assert (got[0] == want[0]).all()
    assert torch.allclose(got[1], want[1], rtol=1e-6, atol=0) and torch.allclose(got[2], want[2], rtol=1e-6, atol=0)
    assert len(ops._qx) == 1 and ops._qx[0][0] is out  # found, not recomputed


def test_quantized_inputs_remembered():
    """The last QX_KEEP quantized matmul inputs are found again (a MoE layer quantizes its shared
    expert's GLU output between two uses of the norm's output): no second quantization of the first."""
    from zinc.backends.cuda.ops import QX_KEEP, CudaOps

    ops = CudaOps(device=DEVICE.type, graphs=False)
    rng = np.random.default_rng(5)
    xs = [torch.from_numpy(rng.standard_normal((1, 64)).astype(np.float32)).to(DEVICE) for _ in range(QX_KEEP + 1)]
    first = [ops._quantized(x, x) for x in xs[:QX_KEEP]]
    again = ops._quantized(xs[0], xs[0])
    assert all(a is b for a, b in zip(again, first[0]))  # the same buffers: not quantized again
    ops._quantized(xs[QX_KEEP], xs[QX_KEEP])  # the first one quantized falls out
    assert len(ops._qx) == QX_KEEP and all(h[0] is not xs[0] for h in ops._qx)
    for got, want in zip(ops._quantized(xs[0], xs[0]), mmvq.quantize_x(xs[0])):
        assert torch.equal(got, want)


@pytest.mark.skipif(not pdl_available(torch.device("cuda")), reason=f"programmatic dependent launch needs {PDL_NEEDS}")
@pytest.mark.parametrize("t", [GGMLType.Q4_K, GGMLType.Q6_K], ids=lambda v: v.name)
def test_pdl_launches_same_results(t):
    """The quantize and streams-matvec kernels launched as programmatic dependent launches (`ops.PDL`: waiting
    after the first weight loads, triggering the next launch at their start) against plain launches: the 8-bit
    activations bit-equal, the matvecs equal to f32 rounding (a variant's multiply-adds may be contracted
    differently: Q6_K 4096 x 12288 at (2, 1 unit, unrolled twice) parts by 1.2e-7 on an H100) at one, two and four
    rows a program, unrolled, a GLU, a pair."""
    from zinc.backends.cuda.kernels.elementwise import GLU_ACTS

    rng = np.random.default_rng(int(t))
    n, k = 300, 4096
    wa, wu = (CudaWeight(QTensor(f"w{i}", t, (n, k), random_blocks(t, n * k, rng, scale=0.05)), DEVICE)
              for i in range(2))
    x, r, w = (torch.from_numpy(rng.standard_normal(s).astype(np.float32)).to(DEVICE) for s in ((1, k), (1, k), k))
    acts, outs = [], []
    for pdl in ((0, 0), (1, 1)):
        o = [torch.empty_like(x), torch.empty_like(x)]
        xq = mmvq.norm_quantize(x, w, 1e-6, o[0], res=r, sum_out=o[1], pdl=pdl)
        xq2 = mmvq.quantize_x(o[0], pdl=pdl)
        ys = []
        for cfg in [(1, 1, 1, 1, 1, 2, 1), (2, 1, 1, 1, 1, 2, 2), (2, 2, 1, 1, 1, 2, 2), (4, 1, 1, 1, 1, 2, 1),
                    (2, 1, 2, 1, 1, 2, 2)]:
            ys.append(torch.empty((1, n), device=DEVICE))
            mmvq.matvec(xq, wa.parts, int(t), n, k, ys[-1], cfg=cfg, pdl=pdl)
        ys.append(torch.empty((1, n), device=DEVICE))
        mmvq.matvec(xq2, wa.parts, int(t), n, k, ys[-1], glu=(wu.parts, GLU_ACTS["silu"]), pdl=pdl)
        ya, yb = torch.empty((1, n), device=DEVICE), torch.empty((1, n), device=DEVICE)
        assert mmvq.matvec_pair(xq, (wa.parts, int(t), n, k, ya), (wu.parts, int(t), n, k, yb), pdl=pdl)
        torch.cuda.synchronize()
        acts.append([*xq, *xq2, *o])
        outs.append([*ys, ya, yb])
    for a, b in zip(*acts):
        assert torch.equal(a, b)
    for a, b in zip(*outs):
        assert rel(b.cpu().numpy(), a.cpu().numpy()) < 1e-6
