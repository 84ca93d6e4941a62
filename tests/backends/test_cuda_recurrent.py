"""The CUDA backend's step kernels of recurrent layers and mixture of experts against the NumPy backend:
conv1d (`conv1d_kernel`, `conv1d_tiles_kernel` for prompts, with silu too), the token-by-token delta rule
(`delta_rule_kernel`, also in its RAW form from a layer's raw projections) and its chunked prompt form, the gated
output norm (`gated_norm_kernel`), the router's top-k and the experts' weighted sum (`kernels/moe.py`), on fresh
random inputs at several shapes, odd ones too.

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

from zinc.backends.cpu import CpuOps  # noqa: E402
from zinc.backends.cuda.kernels import recurrent as krec  # noqa: E402
from zinc.backends.cuda.ops import CudaOps  # noqa: E402
from zinc.testing.compare import rel_err as rel  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@pytest.fixture(scope="module")
def ops():
    return CudaOps(device=DEVICE, graphs=False)


@pytest.fixture(scope="module")
def ref():
    return CpuOps()


def rand(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def dev(a: np.ndarray) -> torch.Tensor:
    """A device copy that never shares memory with `a` (from_numpy on a CPU device would)."""
    return torch.from_numpy(a.copy()).to(DEVICE)


def dev_cols(a: np.ndarray, rng, before: int = 3, after: int = 5) -> torch.Tensor:
    """A device view of a (T, C) as columns of a wider random array (a row stride of its own), as `CudaOps.split`
    gives the parts of a stacked projection."""
    wide = rand(rng, a.shape[0], before + a.shape[1] + after)
    wide[:, before:before + a.shape[1]] = a
    view = dev(wide)[:, before:before + a.shape[1]]
    assert not view.is_contiguous() or a.shape[0] == 1
    return view


# ------------------------------------------------------------------------------------ conv1d


@pytest.mark.parametrize("T,C,K", [(1, 23, 4), (1, 300, 4), (2, 257, 3), (5, 37, 4), (3, 64, 2), (1, 19, 1)])
def test_conv1d_step(ops, ref, T, C, K):
    """Output and the shifted window (in place, same address) after two calls, the second reading
    the state the first left."""
    rng = np.random.default_rng(T * 1000 + C + K)
    st, w = rand(rng, K - 1, C), rand(rng, C, K)
    dst, dw = dev(st), dev(w)
    addr = dst.data_ptr()
    for step in range(2):  # the second input a column slice of a wider array
        x = rand(rng, T, C)
        got = ops.to_numpy(ops.conv1d_causal(dev(x) if step == 0 else dev_cols(x, rng), dst, dw))
        want = ref.conv1d_causal(x, st, w)
        assert got.shape == want.shape and rel(got, want) < 1e-6, step
        assert np.array_equal(ops.to_numpy(dst), st) and dst.data_ptr() == addr


@pytest.mark.parametrize("T,C,K", [(1, 23, 4), (1, 300, 4), (2, 257, 3), (1, 19, 1), (70, 29, 4)])
def test_conv1d_silu_step(ops, ref, T, C, K):
    """conv1d_causal_act(..., "silu"): one kernel (torch past CONV_MAX_T) equal to the default's
    unary(conv1d_causal) on NumPy, and the same shifted window."""
    rng = np.random.default_rng(T * 1000 + C + K + 1)
    st, w = rand(rng, K - 1, C), rand(rng, C, K)
    dst, dw = dev(st), dev(w)
    for step in range(2):
        x = rand(rng, T, C, scale=2.0)
        got = ops.to_numpy(ops.conv1d_causal_act(dev(x), dst, dw, "silu"))
        want = ref.conv1d_causal_act(x, st, w, "silu")
        assert got.shape == want.shape and rel(got, want) < 1e-6, step
        assert np.array_equal(ops.to_numpy(dst), st)


@pytest.mark.parametrize("T,C,K", [(krec.CONV_MAX_T + 3, 29, 4), (130, 300, 4), (97, 257, 3), (200, 19, 1)])
@pytest.mark.parametrize("silu", [False, True])
def test_conv1d_prompt_tiles(ops, ref, monkeypatch, T, C, K, silu):
    """A prompt past CONV_MAX_T tokens: `conv1d_tiles_kernel` (token blocks, the first one shifting the window), equal
    to the NumPy backend over two prompts in a row, the state in place."""
    calls, tiles = [], krec.conv1d_tiles_kernel

    class Spy:  # counts the launches of the tiles kernel
        def __getitem__(self, grid):
            calls.append(grid)
            return tiles[grid]

    monkeypatch.setattr(krec, "conv1d_tiles_kernel", Spy())
    rng = np.random.default_rng(T + C + K + silu)
    st, w = rand(rng, K - 1, C), rand(rng, C, K)
    dst, dw = dev(st), dev(w)
    addr = dst.data_ptr()
    for step in range(2):  # the second prompt a column slice of a wider array
        x = rand(rng, T, C, scale=2.0)
        dx = dev(x) if step == 0 else dev_cols(x, rng)
        if silu:
            got, want = ops.conv1d_causal_act(dx, dst, dw, "silu"), ref.conv1d_causal_act(x, st, w, "silu")
        else:
            got, want = ops.conv1d_causal(dx, dst, dw), ref.conv1d_causal(x, st, w)
        assert rel(ops.to_numpy(got), want) < 1e-6, step
        assert np.array_equal(ops.to_numpy(dst), st) and dst.data_ptr() == addr
    assert len(calls) == 2


# ------------------------------------------------------------------------------------ delta rule


def delta_inputs(rng, n, Hk, Hv, S):
    def l2(x):
        return (x / np.sqrt((x.astype(np.float64) ** 2).sum(-1, keepdims=True) + 1e-6)).astype(np.float32)

    q, k, v = l2(rand(rng, n, Hk, S)), l2(rand(rng, n, Hk, S)), rand(rng, n, Hv, S)
    g = (-np.exp(rng.uniform(-3.0, 1.0, (n, Hv)))).astype(np.float32)
    beta = (1 / (1 + np.exp(-rand(rng, n, Hv)))).astype(np.float32)
    return q, k, v, g, beta


@pytest.mark.parametrize("T,chunk,Hk,Hv,S", [(37, 64, 2, 4, 32), (200, 64, 1, 2, 16), (130, 7, 2, 4, 24),
                                             (50, 300, 1, 3, 40), (1, 64, 2, 2, 16), (70, 16, 1, 1, 128)])
def test_delta_net_chunked(ops, ref, T, chunk, Hk, Hv, S):
    """The chunked prompt form (`chunk_prep_kernel`, a triangular solve, `chunk_state_kernel`) against the
    NumPy backend's token-by-token recurrence: outputs and the state (in place), two prompts in a row (the second
    continues the first's state); odd chunk lengths and dims, a chunk longer than the prompt."""
    rng = np.random.default_rng(T + chunk + S)
    st = rand(rng, Hv, S, S, scale=0.3)
    dst = dev(st)
    for _ in range(2):
        q, k, v, g, beta = delta_inputs(rng, T, Hk, Hv, S)
        got = ops.to_numpy(ops.delta_net_chunked(*(dev(a) for a in (q, k, v, g, beta)), dst, chunk=chunk))
        want = ref.delta_net_recurrent(q, k, v, g, beta, st)
        assert got.shape == want.shape and rel(got, want) < 1e-5
        assert rel(ops.to_numpy(dst), st) < 1e-5


@pytest.mark.parametrize("T,Hk,Hv,S", [(1, 2, 4, 32), (1, 1, 3, 24), (1, 3, 3, 7), (2, 2, 6, 40), (5, 1, 2, 16),
                                       (1, 4, 8, 128)])
def test_delta_rule_step(ops, ref, T, Hk, Hv, S):
    """Outputs and the state (in place) over three calls; v-head h reads k-head h % Hk."""
    rng = np.random.default_rng(T * 100 + Hk * 10 + Hv + S)
    st = rand(rng, Hv, S, S, scale=0.3)
    dst = dev(st)
    addr = dst.data_ptr()
    for step in range(3):
        q, k, v, g, beta = delta_inputs(rng, T, Hk, Hv, S)
        got = ops.to_numpy(ops.delta_net_recurrent(*(dev(a) for a in (q, k, v, g, beta)), dst))
        want = ref.delta_net_recurrent(q, k, v, g, beta, st)
        assert got.shape == want.shape and rel(got, want) < 1e-5, step
        assert rel(ops.to_numpy(dst), st) < 1e-5 and dst.data_ptr() == addr


def test_gated_delta_net_one_token_uses_kernel(ops, ref, monkeypatch):
    """The decode form (one token) runs the kernel, not the per-token torch loop."""
    calls, step = [], krec._delta_step
    monkeypatch.setattr(krec, "_delta_step", lambda *a: calls.append(1) or step(*a))
    rng = np.random.default_rng(9)
    q, k, v, g, beta = delta_inputs(rng, 1, 2, 4, 16)
    st = rand(rng, 4, 16, 16, scale=0.3)
    dst = dev(st)
    got = ops.to_numpy(ops.gated_delta_net(*(dev(a) for a in (q, k, v, g, beta)), dst))
    assert calls and rel(got, ref.delta_net_recurrent(q, k, v, g, beta, st)) < 1e-5


def raw_inputs(rng, n, Hk, Hv, S):
    """Un-normalized q, k, v and the raw gate projections: alpha (wide, both softplus branches),
    the beta logit, dt_bias and a (< 0)."""
    q, k, v = rand(rng, n, Hk, S, scale=2.0), rand(rng, n, Hk, S), rand(rng, n, Hv, S)
    alpha, b = rand(rng, n, Hv, scale=8.0), rand(rng, n, Hv, scale=2.0)
    dt_bias, a = rand(rng, Hv), (-np.exp(rng.uniform(-2.0, 1.0, Hv))).astype(np.float32)
    alpha[0, 0] = 25.0  # past softplus' threshold
    return q, k, v, alpha, b, dt_bias, a


@pytest.mark.parametrize("Hk,Hv,S", [(2, 4, 32), (1, 3, 24), (3, 3, 7), (4, 8, 128), (2, 6, 40)])
def test_delta_net_step_raw(ops, ref, monkeypatch, Hk, Hv, S):
    """One token from the raw projections: the RAW kernel (one launch) equals the NumPy default
    (sigmoid, softplus gate, L2 norms, recurrence), outputs and state, over three steps."""
    calls, step = [], krec._delta_step
    monkeypatch.setattr(krec, "_delta_step", lambda *a, **kw: calls.append(kw.get("raw")) or step(*a, **kw))
    rng = np.random.default_rng(Hk * 10 + Hv + S)
    st = rand(rng, Hv, S, S, scale=0.3)
    dst = dev(st)
    addr = dst.data_ptr()
    for i in range(3):
        args = raw_inputs(rng, 1, Hk, Hv, S)
        got = ops.to_numpy(ops.delta_net_step(*(dev(a) for a in args), dst, 1e-6))
        want = ref.delta_net_step(*args, st, 1e-6)
        assert got.shape == want.shape and rel(got, want) < 1e-5, i
        assert rel(ops.to_numpy(dst), st) < 1e-5 and dst.data_ptr() == addr
    assert len(calls) == 3 and all(c is not None for c in calls)


@pytest.mark.parametrize("T,Hk,Hv,S", [(6, 2, 4, 16), (130, 1, 3, 24), (70, 2, 2, 128)])
def test_delta_net_step_prompt(ops, ref, T, Hk, Hv, S):
    """A prompt from the raw projections (the chunked form, gates and norms in `chunk_prep_kernel`): q, k and v
    column slices of one (T, 2 Hk S + Hv S) array and alpha, b of another, as the model passes them, against the
    NumPy default, outputs and state over two prompts in a row."""
    rng = np.random.default_rng(T + S)
    st = rand(rng, Hv, S, S, scale=0.3)
    dst = dev(st)
    for _ in range(2):
        q, k, v, alpha, b, dt_bias, a = raw_inputs(rng, T, Hk, Hv, S)
        mixed = dev(np.concatenate([x.reshape(T, -1) for x in (q, k, v)], axis=1))
        dq, dk, dv = (x.reshape(T, -1, S) for x in ops.split(mixed, (Hk * S, Hk * S, Hv * S)))
        gates = ops.split(dev(np.concatenate([rand(rng, T, 3), alpha, b], axis=1)), (3, Hv, Hv))[1:]
        got = ops.to_numpy(ops.delta_net_step(dq, dk, dv, *gates, dev(dt_bias), dev(a), dst, 1e-6))
        want = ref.delta_net_step(q, k, v, alpha, b, dt_bias, a, st, 1e-6)
        assert got.shape == want.shape and rel(got, want) < 3e-5  # H200, tf32x3 products: 1.2e-5 at S = 128
        assert rel(ops.to_numpy(dst), st) < 3e-5


@pytest.mark.parametrize("cfg", [(16, 4), (8, 2), (64, 8)])
@pytest.mark.parametrize("B,Hk,Hv,S,K", [(3, 2, 4, 16, 4), (5, 1, 3, 12, 3), (1, 2, 2, 32, 4)])
def test_conv_delta_seqs(ops, ref, monkeypatch, B, Hk, Hv, S, K, cfg):
    """B sequences of one token, each on its own conv window and delta-rule state found through a table
    (`CudaOps.conv_delta_rule_seqs`: `krec.conv_delta_seqs`, a batched decode step), against the NumPy backend's
    `conv_delta_rule` a sequence at a time; the states too. The mixed rows are a column slice (row stride of
    their own), as the stacked projections give them. cfg: `krec.DELTA_SEQS` (state columns and warps a program)."""
    from types import SimpleNamespace

    from zinc.backends.cuda.kernels import recurrent as krec

    monkeypatch.setattr(krec, "DELTA_SEQS", cfg)

    rng = np.random.default_rng(B * 100 + S)
    C = 2 * Hk * S + Hv * S
    mixed, alpha, b = rand(rng, B, C), rand(rng, B, Hv), rand(rng, B, Hv)
    w, dt_bias, a = rand(rng, C, K, scale=0.5), rand(rng, Hv), -np.abs(rand(rng, Hv))
    convs = [rand(rng, K - 1, C) for _ in range(B)]
    ssms = [rand(rng, Hv, S, S, scale=0.3) for _ in range(B)]
    want = []
    for i in range(B):
        st_c, st_s = convs[i].copy(), ssms[i].copy()
        want.append(ref.conv_delta_rule(mixed[i:i + 1], alpha[i:i + 1], b[i:i + 1], w, dt_bias, a, st_c, st_s,
                                        (Hk, Hv, S), 1e-6))
        want.append((st_c, st_s))
    dc, ds = [dev(c) for c in convs], [dev(x) for x in ssms]
    table = torch.tensor([[c.data_ptr(), x.data_ptr(), 0, 0] for c, x in zip(dc, ds)], dtype=torch.int64,
                         device=DEVICE)
    states = SimpleNamespace(table=table, counts=(1,) * B, parts=None)
    got = ops.conv_delta_rule_seqs(dev_cols(mixed, rng), dev(alpha), dev(b), dev(w), dev(dt_bias), dev(a), states,
                                   (Hk, Hv, S), 1e-6)
    got = ops.to_numpy(got)
    for i in range(B):
        assert rel(got[i:i + 1], want[2 * i]) < 1e-5, i
        assert rel(ops.to_numpy(dc[i]), want[2 * i + 1][0]) < 1e-6 and rel(ops.to_numpy(ds[i]), want[2 * i + 1][1]) < 1e-5


@pytest.mark.parametrize("shape", [(1, 4, 32), (1, 3, 7), (2, 5, 128), (1, 32, 128), (3, 1, 100)])
def test_rms_norm_gated(ops, ref, shape):
    rng = np.random.default_rng(sum(shape))
    x, z, w = rand(rng, *shape), rand(rng, *shape, scale=3.0), rand(rng, shape[-1])
    got = ops.to_numpy(ops.rms_norm_gated(dev(x), dev(w), 1e-6, dev(z), "silu"))
    want = ref.rms_norm_gated(x, w, 1e-6, z, "silu")
    assert got.shape == want.shape and rel(got, want) < 1e-6
    dz = dev_cols(z.reshape(shape[0], -1), rng).reshape(shape)  # z's heads read in place from a column slice
    assert rel(ops.to_numpy(ops.rms_norm_gated(dev(x), dev(w), 1e-6, dz, "silu")), want) < 1e-6


def test_kv_tables_need_aligned_states(ops):
    """The batched kernels read the states 16-byte aligned (`recurrent._seq_state`): `CudaOps.kv_tables` gives a
    table for states at such addresses, and None (a sequence at a time) for a state that is not."""
    from types import SimpleNamespace

    from zinc.engine.cache import LayerState

    class Cache:  # (kv_tables remembers a cache's rows by a weak reference)
        def __init__(self, offset: int):
            st = LayerState.__new__(LayerState)
            st.conv = torch.zeros(3 * 64 + 1, device=DEVICE)[offset:offset + 3 * 64].view(3, 64)
            st.ssm = torch.zeros(2, 16, 16, device=DEVICE)
            self.layers = [st]
    good, bad = Cache(0), Cache(1)
    table = ops.kv_tables(SimpleNamespace(caches=[good, good]))
    assert tuple(table.shape) == (1, 2, 4) and int(table[0, 1, 0]) == good.layers[0].conv.data_ptr()
    assert ops.kv_tables(SimpleNamespace(caches=[good, bad])) is None


def test_rms_norm_gated_half_copy(ops, ref):
    """At a batched step's rows (the tile GEMM's) the gated norm also stores its output in f16 (`CudaOps._x16`),
    which the output projection's tile GEMM then reads: the same products as rounding x in the GEMM."""
    from zinc.gguf.constants import GGMLType
    from zinc.testing.compare import random_weight

    rng = np.random.default_rng(41)
    x, z, w = rand(rng, 9, 4, 64), rand(rng, 9, 4, 64, scale=3.0), rand(rng, 64)
    ops._x16 = None
    out = ops.rms_norm_gated(dev(x), dev(w), 1e-6, dev(z), "silu")
    assert rel(ops.to_numpy(out), ref.rms_norm_gated(x, w, 1e-6, z, "silu")) < 1e-6
    flat = out.reshape(9, 256)
    assert ops._same_memory(ops._x16[0], flat) and torch.equal(ops._x16[1], flat.half())
    wo = ops.upload(random_weight(GGMLType.Q4_K, (40, 256), 3))
    got = ops.to_numpy(ops.matmul(flat, wo))
    ops._x16 = None
    assert np.array_equal(got, ops.to_numpy(ops.matmul(flat, wo)))


@pytest.mark.parametrize("T,H,N", [(1, 4, 32), (1, 3, 128), (2, 5, 64), (4, 2, 256)])
def test_rms_norm_gated_q8(ops, ref, T, H, N):
    """With the 8-bit form: the output as above and its codes, scales and sums equal quantize_x of it,
    and the following matmul reads them (no quantization of its own)."""
    from zinc.backends.cuda.kernels import mmvq

    rng = np.random.default_rng(T + H + N)
    x, z, w = rand(rng, T, H, N), rand(rng, T, H, N, scale=3.0), rand(rng, N)
    q8 = mmvq.q8_buffers(T, H * N, DEVICE)
    out = krec.rms_norm_gated(dev(x), dev(w), 1e-6, dev(z), q8)
    assert rel(ops.to_numpy(out), ref.rms_norm_gated(x, w, 1e-6, z, "silu")) < 1e-6
    for got, want in zip(q8, mmvq.quantize_x(out.reshape(T, H * N))):
        assert torch.equal(got, want)
    cops = CudaOps(device=DEVICE, graphs=False)
    y = cops.rms_norm_gated(dev(x), dev(w), 1e-6, dev(z), "silu")
    before, flat = list(cops._qx), y.reshape(T, H * N)  # the output projection finds the norm's quantization
    assert cops._quantized(flat, flat)[0] is before[0][1] and [id(h) for h in cops._qx] == [id(h) for h in before]


# ------------------------------------------------------------------------------------ mixture of experts


@pytest.mark.parametrize("gating,norm_w,w_scale", [("softmax", True, 1.0), ("softmax", False, 2.5),
                                                   ("sigmoid", True, 1.0), ("sigmoid", False, 0.0),
                                                   ("softmax_weight", False, 1.0), ("softmax_weight", True, 1.5)])
@pytest.mark.parametrize("T,E,k", [(1, 256, 8), (1, 11, 3), (4, 37, 5), (7, 128, 4), (2, 16, 1)])
def test_router_topk(ops, ref, gating, norm_w, w_scale, T, E, k):
    rng = np.random.default_rng(E * 10 + k + T)
    logits = rand(rng, T, E, scale=2.0)
    ids, w = ops.router_topk(dev(logits), k, gating, norm_w, w_scale)
    rid, rw = ref.router_topk(logits, k, gating, norm_w, w_scale)
    assert ops.to_numpy(ids).dtype == np.int32 and ops.to_numpy(w).dtype == np.float32
    assert (ops.to_numpy(ids) == rid).all() and rel(ops.to_numpy(w), rw) < 1e-6


@pytest.mark.parametrize("T,E,k", [(1, 256, 8), (3, 37, 5), (2, 16, 1)])
def test_router_topk_shared(ops, ref, T, E, k):
    """The folded shared expert's slot (`router_topk_shared`, one kernel): the top-k, then expert E with
    weight sigmoid(gate), against the NumPy backend (BaseOps' host default)."""
    rng = np.random.default_rng(E + 3 * k + T)
    logits, gate = rand(rng, T, E, scale=2.0), rand(rng, T, 1, scale=3.0)
    ids, w = ops.router_topk_shared(dev(logits), k, "softmax", True, 1.0, dev(gate))
    rid, rw = ref.router_topk_shared(logits, k, "softmax", True, 1.0, gate)
    assert ops.to_numpy(ids).shape == (T, k + 1) and (ops.to_numpy(ids) == rid).all()
    assert (rid[:, k] == E).all() and rel(ops.to_numpy(w), rw) < 1e-6


@pytest.mark.parametrize("gating", ["softmax", "sigmoid", "softmax_weight"])
def test_router_ties_to_lower_id(ops, ref, gating):
    """Equal logits (so equal probabilities) are taken lowest expert id first, as a stable sort."""
    logits = np.array([[0.5, 2.0, 2.0, -1.0, 2.0, 0.5, 0.5, 3.0, 0.5],
                       [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]], np.float32)
    ids, w = ops.router_topk(dev(logits), 6, gating, True, 1.0)
    rid, rw = ref.router_topk(logits, 6, gating, True, 1.0)
    assert (ops.to_numpy(ids) == rid).all() and rel(ops.to_numpy(w), rw) < 1e-6
    assert ops.to_numpy(ids)[0].tolist() == [7, 1, 2, 4, 0, 5]


@pytest.mark.parametrize("T,k,D", [(1, 8, 2048), (1, 3, 37), (5, 4, 300), (2, 1, 64)])
def test_weighted_sum(ops, ref, T, k, D):
    rng = np.random.default_rng(T + k + D)
    x, w = rand(rng, T, k, D), rand(rng, T, k)
    got = ops.to_numpy(ops.weighted_sum(dev(x), dev(w)))
    want = ref.weighted_sum(x, w)
    assert got.shape == want.shape and rel(got, want) < 1e-6


@pytest.mark.parametrize("T,k,D,gated", [(1, 8, 2048, True), (3, 3, 37, True), (2, 4, 300, False)])
def test_weighted_sum_shared(ops, ref, T, k, D, gated):
    """The experts' sum plus a shared expert behind its sigmoid gate, in one kernel, against BaseOps'
    composition on the NumPy backend."""
    rng = np.random.default_rng(T * 7 + k + D)
    x, w, sh = rand(rng, T, k, D), rand(rng, T, k), rand(rng, T, D)
    g = rand(rng, T, 1) if gated else None
    got = ops.to_numpy(ops.weighted_sum_shared(dev(x), dev(w), dev(sh), dev(g) if gated else None))
    want = ref.weighted_sum_shared(x, w, sh, g)
    assert got.shape == want.shape and rel(got, want) < 1e-6
