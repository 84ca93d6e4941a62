"""The NumPy backend: float32 math written to be read, the reference every other backend is checked against.

Numerics follow llama.cpp's CPU path on f32 weights (spec common-ops §0): reductions of norms and
softmax sums in float64, RoPE angles built by the same iterative f32 product, GELU through ggml's
f16 lookup table (``gelu="table"``, the default; ``gelu="exact"`` gives the plain tanh form).
The recurrent-layer kernels (causal conv1d, the delta rule in its recurrent and chunked forms) live
in `deltanet.py`.

Weights: a `CpuWeight` keeps the raw GGUF bytes (an mmap view, so loading costs no memory) and is
dequantized to float32 on first use and kept, as long as the backend's total of kept float32 weights
stays under ``dequant_budget`` bytes (8 GiB by default: every weight of a 1B model fits). Weights
past the budget are dequantized per use, a block of rows (or one expert) at a time, so memory stays
bounded whatever the model size. Embedding lookups only ever decode the rows they need.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from zinc.backends.base import BaseOps, Q8Cells, QTensor, RopeParams
from zinc.backends.cpu import deltanet
from zinc.gguf.constants import GGMLType
from zinc.gguf.quants import dequantize, q8_blocks, supported_types

F32 = np.float32
_DTYPES = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "i8": np.int8}
_ROWS_PER_STEP = 4096
GELU_COEF_A = F32(0.044715)
SQRT_2_OVER_PI = F32(0.79788456080286535587989211986876)


class CpuWeight:
    """A weight on the CPU backend: raw bytes plus (within the budget) a cached float32 copy."""

    def __init__(self, qt: QTensor, owner: "CpuOps") -> None:
        self.qt = qt
        self.shape = qt.shape
        self.ggml_type = qt.ggml_type
        self._owner = owner
        self._f32: np.ndarray | None = None

    def f32(self) -> np.ndarray | None:
        """The whole tensor as float32 if it is (or can now be) kept within the budget, else None."""
        if self._f32 is None and self._owner._reserve(self.qt.n_elements * 4):
            self._f32 = self.qt.dequantize()
        return self._f32

    def decode_rows(self, rows: np.ndarray | slice) -> np.ndarray:
        """Rows of the flattened (n_rows, K) view, decoded now (not kept)."""
        raw = self.qt.rows()[rows]
        return dequantize(raw, self.ggml_type, raw.shape[0] * self.shape[-1]).reshape(raw.shape[0], -1)

    def expert(self, e: int) -> np.ndarray:
        """Expert slab `e` of an (E, N, K) stack as float32 (N, K)."""
        full = self.f32()
        if full is not None:
            return full[e]
        n = self.shape[1]
        return self.decode_rows(slice(e * n, (e + 1) * n))


def _cells_f32(cells, n: int) -> np.ndarray:
    """The first n KV cells as f32 (q8_0 cells dequantized: q * d per 32 values)."""
    if isinstance(cells, Q8Cells):
        return cells.q[:n].astype(F32) * np.repeat(cells.d[:n].astype(F32), 32, axis=-1)
    return cells[:n].astype(F32)


class CpuOps(BaseOps):
    """The NumPy implementation of `zinc.backends.base.Ops`. Options: kv_dtype (the default KV cell type),
    dequant_budget (bytes of dequantized weights kept), gelu ("table" as ggml's CPU backend, or "exact")."""

    name = "cpu"
    kv_types = ("f32", "f16", "q8_0")

    @property
    def device_name(self) -> str:
        from zinc.machine import cpu_name

        return cpu_name()

    def __init__(self, dequant_budget: int = 8 << 30, gelu: str = "table", kv_dtype: str = "f32") -> None:
        if gelu not in ("table", "exact"):
            raise ValueError(f"gelu must be 'table' or 'exact', got {gelu!r}")
        if kv_dtype not in self.kv_types:
            raise ValueError(f"kv_dtype must be one of {', '.join(self.kv_types)}, got {kv_dtype!r}")
        self.kv_dtype = kv_dtype
        self.dequant_budget = int(dequant_budget)
        self.gelu_mode = gelu
        self._kept = 0
        self._gelu_table: np.ndarray | None = None

    def _reserve(self, nbytes: int) -> bool:
        if self._kept + nbytes > self.dequant_budget:
            return False
        self._kept += nbytes
        return True

    # -- memory ----------------------------------------------------------------------------------
    def upload(self, qt: QTensor) -> CpuWeight:
        return CpuWeight(qt, self)

    def from_numpy(self, a: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(a)

    def to_numpy(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(x)

    def zeros(self, shape: tuple[int, ...], dtype: str) -> np.ndarray:
        return np.zeros(shape, _DTYPES[dtype])

    def full(self, shape: tuple[int, ...], value: float, dtype: str) -> np.ndarray:
        return np.full(shape, value, _DTYPES[dtype])

    def capabilities(self) -> dict[str, frozenset[GGMLType]]:
        types = frozenset(supported_types())
        return {"embed": types, "matmul": types, "matmul_experts": types}

    # -- shapes ------------------------------------------------------------------------------------
    def reshape(self, x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        return x.reshape(shape)

    def split(self, x: np.ndarray, sizes: Iterable[int]) -> list[np.ndarray]:
        bounds = np.cumsum(list(sizes))[:-1]
        return [np.ascontiguousarray(p) for p in np.split(x, bounds, axis=-1)]

    def slice_rows(self, x: np.ndarray, start: int, stop: int) -> np.ndarray:
        return x[start:stop]

    def concat_rows(self, xs: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(xs)

    # -- weight ops ----------------------------------------------------------------------------------
    def embed(self, w: CpuWeight, ids: np.ndarray) -> np.ndarray:
        full = w._f32
        if full is not None:
            return full[ids]
        uniq, inv = np.unique(np.asarray(ids, np.int64), return_inverse=True)
        return w.decode_rows(uniq)[inv.reshape(-1)].reshape(*np.shape(ids), w.shape[-1])

    def matmul(self, x: np.ndarray, w: CpuWeight) -> np.ndarray:
        full = w.f32()
        if full is not None:
            return np.matmul(x, full.T)
        n = w.shape[0]
        out = np.empty((*x.shape[:-1], n), F32)
        for s in range(0, n, _ROWS_PER_STEP):
            rows = w.decode_rows(slice(s, min(n, s + _ROWS_PER_STEP)))
            out[..., s:s + rows.shape[0]] = np.matmul(x, rows.T)
        return out

    def matmul_experts(self, x: np.ndarray, w: CpuWeight, ids: np.ndarray) -> np.ndarray:
        T, k = ids.shape
        xs = np.broadcast_to(x[:, None, :], (T, k, x.shape[-1])) if x.ndim == 2 else x
        out = np.empty((T, k, w.shape[1]), F32)
        for e in np.unique(ids):
            t, j = np.nonzero(ids == e)
            out[t, j] = np.matmul(xs[t, j], w.expert(int(e)).T)
        return out

    # -- elementwise, norms ----------------------------------------------------------------------------
    def add(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.add(a, b, dtype=F32)

    def mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.multiply(a, b, dtype=F32)

    def scale(self, x: np.ndarray, s: float) -> np.ndarray:
        return x * F32(s)

    def softcap(self, x: np.ndarray, cap: float) -> np.ndarray:
        return np.tanh(x * (F32(1) / F32(cap))) * F32(cap)

    def rms_norm(self, x: np.ndarray, w: np.ndarray | None, eps: float) -> np.ndarray:
        sq = (x * x).astype(np.float64).sum(axis=-1, keepdims=True)
        mean = (sq / x.shape[-1]).astype(F32)
        y = x * (F32(1) / np.sqrt(mean + F32(eps)))
        return y * w if w is not None else y

    def glu(self, gate: np.ndarray, up: np.ndarray, act: str) -> np.ndarray:
        if act == "silu":
            return gate / (F32(1) + np.exp(-gate)) * up
        if act == "gelu":
            return self._gelu(gate) * up
        if act == "swiglu_oai":  # ggml_swiglu_oai: alpha 1.702, limit 7
            x = np.minimum(gate, F32(7))
            y = np.clip(up, F32(-7), F32(7))
            return x / (F32(1) + np.exp(F32(1.702) * -x)) * (y + F32(1))
        raise ValueError(f"unknown GLU activation {act!r}")

    def unary(self, x: np.ndarray, fn: str) -> np.ndarray:
        if fn == "sigmoid":
            return F32(1) / (F32(1) + np.exp(-x))
        if fn == "silu":
            return x / (F32(1) + np.exp(-x))
        if fn == "softplus":  # ggml: x if x > 20 else logf(1 + expf(x))
            with np.errstate(over="ignore"):
                return np.where(x > F32(20), x, np.log(F32(1) + np.exp(x))).astype(F32)
        if fn == "gelu":
            return self._gelu(x)
        raise ValueError(f"unknown unary function {fn!r}")

    def _gelu(self, x: np.ndarray) -> np.ndarray:
        if self.gelu_mode == "exact":
            return gelu_tanh(x)
        if self._gelu_table is None:
            with np.errstate(all="ignore"):  # the table also covers inf and nan codes
                all_f16 = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(F32)
                self._gelu_table = gelu_tanh(all_f16).astype(np.float16).astype(F32)
        with np.errstate(over="ignore"):
            y = self._gelu_table[x.astype(np.float16).view(np.uint16)]
        return np.where(x <= -10, F32(0), np.where(x >= 10, x, y))

    # -- attention ---------------------------------------------------------------------------------------
    def rope(self, x: np.ndarray, pos: np.ndarray, p: RopeParams,
             freq_factors: np.ndarray | None = None) -> np.ndarray:
        cos, sin = rope_cache(pos, p, freq_factors)  # (T, n_dims/2)
        cos, sin = cos[:, None, :], sin[:, None, :]
        n, half = p.n_dims, p.n_dims // 2
        out = x.copy()
        if p.mode in ("neox", "imrope"):
            x0, x1 = x[..., :half], x[..., half:n]
            out[..., :half] = x0 * cos - x1 * sin
            out[..., half:n] = x0 * sin + x1 * cos
        elif p.mode == "norm":
            x0, x1 = x[..., 0:n:2], x[..., 1:n:2]
            out[..., 0:n:2] = x0 * cos - x1 * sin
            out[..., 1:n:2] = x0 * sin + x1 * cos
        else:
            raise ValueError(f"unknown rope mode {p.mode!r}")
        return out

    def kv_write(self, cache_k, cache_v, cache_pos, k, v, pos, slots) -> None:
        for cells, x in ((cache_k, k), (cache_v, v)):
            if isinstance(cells, Q8Cells):  # q8_0 blocks of 32 values along each head
                d, q = q8_blocks(np.asarray(x, F32).reshape(-1, 32))
                cells.q[slots] = q.reshape(-1, *cells.q.shape[1:])
                cells.d[slots] = d.astype(np.float16).reshape(-1, *cells.d.shape[1:])
            else:
                cells[slots] = x
        cache_pos[slots] = pos

    def attention(self, q, k, v, q_pos, kv_pos, n_kv, kq_scale, window=0, softcap=0.0, sinks=None):
        T, Hq, Dh = q.shape
        k, v, kp = _cells_f32(k, n_kv), _cells_f32(v, n_kv), kv_pos[:n_kv]
        Hkv, Dv = k.shape[1], v.shape[2]
        r = Hq // Hkv
        qh = q.reshape(T, Hkv, r, Dh).transpose(1, 2, 0, 3)  # (Hkv, r, T, Dh)
        s = np.matmul(qh, k.transpose(1, 2, 0)[:, None])  # (Hkv, r, T, S)
        if softcap:
            s = self.softcap(s, softcap)
        d = q_pos[:, None].astype(np.int64) - kp[None, :]
        visible = (kp[None, :] >= 0) & (d >= 0)
        if window:
            visible &= d < window
        s = np.where(visible, s * F32(kq_scale), F32(-np.inf))
        m = s.max(axis=-1, keepdims=True)
        sink = None
        if sinks is not None:
            sink = sinks.reshape(Hkv, r, 1, 1).astype(F32)
            m = np.maximum(m, sink)
        e = np.exp(s - m)
        z = e.astype(np.float64).sum(axis=-1, keepdims=True)
        if sink is not None:
            z = z + np.exp(sink - m)
        p = e * (1.0 / z).astype(F32)
        out = np.matmul(p, v.transpose(1, 0, 2)[:, None])  # (Hkv, r, T, Dv)
        return np.ascontiguousarray(out.transpose(2, 0, 1, 3)).reshape(T, Hq, Dv)

    # -- recurrent layers ------------------------------------------------------------------------------
    def conv1d_causal(self, x, state, w):
        return deltanet.conv1d_causal(x, state, w)

    def delta_net_recurrent(self, q, k, v, g, beta, state):
        return deltanet.delta_net_recurrent(q, k, v, g, beta, state)

    def delta_net_chunked(self, q, k, v, g, beta, state, chunk=64):
        return deltanet.delta_net_chunked(q, k, v, g, beta, state, chunk)

    # -- mixture of experts -----------------------------------------------------------------------------
    def router_topk(self, logits, k, gating, norm_w, w_scale):
        if gating == "softmax":
            probs = softmax(logits)
        elif gating == "sigmoid":
            probs = F32(1) / (F32(1) + np.exp(-logits))
        elif gating == "softmax_weight":
            probs = logits
        else:
            raise ValueError(f"unknown expert gating {gating!r}")
        ids = np.argsort(-probs, axis=-1, kind="stable")[:, :k].astype(np.int32)
        w = np.take_along_axis(probs, ids, axis=-1)
        if gating == "softmax_weight":
            w = softmax(w)
        if norm_w:
            w = w / np.maximum(w.astype(np.float64).sum(-1, keepdims=True), 6.103515625e-5).astype(F32)
        if w_scale and w_scale != 1.0:
            w = w * F32(w_scale)
        return ids, w.astype(F32)

    def weighted_sum(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        y = x * w[..., None]
        out = y[:, 0].copy()
        for j in range(1, y.shape[1]):
            out += y[:, j]
        return out

    def argmax(self, x: np.ndarray) -> np.ndarray:
        return np.argmax(x, axis=-1).astype(np.int32)


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """tanh-GELU in float32, in ggml's operation order."""
    x = x.astype(F32)
    inner = SQRT_2_OVER_PI * x * (F32(1) + GELU_COEF_A * x * x)
    return F32(0.5) * x * (F32(1) + np.tanh(inner))


def softmax(x: np.ndarray) -> np.ndarray:
    """Softmax over the last axis: f32 exponentials, float64 sum (as ggml_soft_max)."""
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e * (1.0 / e.astype(np.float64).sum(axis=-1, keepdims=True)).astype(F32)


def rope_cache(pos: np.ndarray, p: RopeParams, freq_factors: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin (T, n_dims/2) exactly as ggml_rope_cache_init builds them (common-ops §2.1)."""
    half = p.n_dims // 2
    theta_scale = np.power(F32(p.freq_base), F32(-2.0) / F32(p.n_dims))
    theta = np.empty((len(pos), half), F32)
    t = np.asarray(pos).astype(F32)
    for i in range(half):
        theta[:, i] = t
        t = t * theta_scale
    if p.mode == "imrope":  # text: streams t, h, w carry the position, stream e is 0
        theta = theta * imrope_text_mask(p.sections, half)
    if freq_factors is not None:
        theta = theta / freq_factors[:half].astype(F32)
    theta_interp = F32(p.freq_scale) * theta
    mscale = F32(p.attn_factor)
    if p.ext_factor != 0.0:
        lo, hi = yarn_corr_dims(p)
        i0 = np.arange(half) * 2
        y = ((i0 // 2).astype(F32) - lo) / F32(max(0.001, hi - lo))
        ramp = (F32(1) - np.minimum(F32(1), np.maximum(F32(0), y))) * F32(p.ext_factor)
        theta_interp = theta_interp * (F32(1) - ramp) + theta * ramp
        mscale = mscale * (F32(1) + F32(0.1) * np.log(F32(1) / F32(p.freq_scale)))
    th = theta_interp.astype(np.float64)
    return (np.cos(th).astype(F32) * mscale), (np.sin(th).astype(F32) * mscale)


def imrope_text_mask(sections: tuple[int, ...], half: int) -> np.ndarray:
    """1 for the rotation pairs whose IMROPE stream is t, h or w (ggml_mrope_cache_init), 0 for e."""
    s = list(sections) + [0] * (4 - len(sections))
    n = sum(s)
    mask = np.zeros(half, F32)
    for i in range(half):
        sector = i % n if n else 0
        mask[i] = ((sector % 3 == 1 and sector < 3 * s[1]) or (sector % 3 == 2 and sector < 3 * s[2])
                   or (sector % 3 == 0 and sector < 3 * s[0]))
    return mask


def yarn_corr_dims(p: RopeParams) -> tuple[F32, F32]:
    """ggml_rope_yarn_corr_dims: the dims where the YaRN ramp starts and ends."""
    def corr_dim(n_rot: float) -> float:
        return p.n_dims * np.log(p.n_ctx_orig / (n_rot * 2 * np.pi)) / (2 * np.log(p.freq_base))

    start = np.floor(F32(corr_dim(p.beta_fast)))
    end = np.ceil(F32(corr_dim(p.beta_slow)))
    return F32(max(0.0, start)), F32(min(p.n_dims - 1, end))

