"""The op interface every backend implements, the quantized weight type and the capability check.

A model is written once against `Ops` and never looks at which backend runs it. Activations are
backend arrays (NumPy arrays on the CPU, torch tensors on CUDA, ...) that only the backend's ops
touch; the model only reshapes and splits them through ops too. Weights are `QTensor`s (raw GGUF
bytes plus their ggml type); `Ops.upload` turns one into the backend's weight handle, and
`matmul` / `embed` / `matmul_experts` pick their kernel from the weight's ggml type, so quantization
is invisible to models.

Shapes are row-major. `T` tokens of the current step, `S` KV cells, `Hq`/`Hkv` query/KV heads,
`Dh` head dim. A weight of row-major shape `(N, K)` maps `K` inputs to `N` outputs (`y = x @ W.T`);
an expert stack has shape `(E, N, K)`.

Recurrent layers (Gated DeltaNet) add three ops: a causal depthwise conv1d that rolls its own
input window (`conv1d_causal`) and the delta rule in two forms, token by token
(`delta_net_recurrent`) and chunked (`delta_net_chunked`, the parallel form prefill uses). Their
state buffers belong to the cache and are updated in place, like `kv_write`.

KV cells are an array (S, Hkv, D) of "f32" or "f16", or `Q8Cells` for "q8_0" (`Ops.kv_cells`): each ggml q8_0
block of 32 values of a cell's head as its int8 values and its f16 scale, in two planes. Only `kv_write` and
the attention ops look inside; a backend lists the types it stores in `kv_types`.

`BaseOps` carries the default compositions of the fused ops (add + norm, matmul + GLU,
rope + KV write, Q and K rope of a layer, the delta-rule form chosen by step size, the delta rule from
a layer's raw projections, conv1d + activation, the gated RMS norm); a backend overrides one when it has a
kernel for it. `check_capabilities` runs at
load time and raises `BackendUnavailableError` listing every (op, ggml type) pair a backend lacks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Protocol, runtime_checkable

import numpy as np

from zinc.errors import BackendUnavailableError
from zinc.gguf.constants import BLOCK_LAYOUT, GGMLType, row_nbytes

Array = Any  # a backend activation array
Weight = Any  # a backend weight handle (from Ops.upload)

WEIGHT_OPS = ("embed", "matmul", "matmul_experts")  # the ops whose kernel depends on a ggml type


@dataclass(frozen=True)
class Q8Cells:
    """KV cells stored as q8_0: q (S, H, D) int8 and d (S, H, D // 32) f16; value [s, h, i] = q * d[s, h, i // 32]."""

    q: Any
    d: Any

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.q.shape)


@dataclass(frozen=True)
class QTensor:
    """A weight as stored in the file: raw ggml blocks (often a zero-copy mmap view) and its type."""

    name: str
    ggml_type: GGMLType
    shape: tuple[int, ...]  # row-major; the last axis is the contiguous (block) axis
    data: np.ndarray  # uint8, exactly nbytes long

    @classmethod
    def from_gguf(cls, gguf: Any, name: str) -> "QTensor":
        info = gguf.info(name)
        return cls(name, GGMLType(info.ggml_type), tuple(info.shape), gguf.raw(name))

    @property
    def n_elements(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return int(self.data.nbytes)

    @property
    def row_nbytes(self) -> int:
        return row_nbytes(self.ggml_type, self.shape[-1])

    @property
    def block_size(self) -> int:
        return BLOCK_LAYOUT[self.ggml_type][0]

    def rows(self) -> np.ndarray:
        """The raw bytes as (n_rows, row_nbytes): row i holds the blocks of output row i."""
        return self.data.reshape(-1, self.row_nbytes)

    def dequantize(self) -> np.ndarray:
        """The whole tensor as float32 in its row-major shape."""
        from zinc.gguf.quants import dequantize

        return dequantize(self.data, self.ggml_type, self.n_elements).reshape(self.shape)


@dataclass(frozen=True)
class RopeParams:
    """Everything `ggml_rope_ext` takes besides the data and positions (spec common-ops §2)."""

    n_dims: int  # rotated dims per head (<= head dim; the rest pass through)
    mode: str = "norm"  # "norm" (adjacent pairs), "neox" (rotate half) or "imrope" (interleaved M-RoPE)
    freq_base: float = 10000.0
    freq_scale: float = 1.0
    ext_factor: float = 0.0  # YaRN ramp mix, 1.0 with YaRN scaling
    attn_factor: float = 1.0
    beta_fast: float = 32.0
    beta_slow: float = 1.0
    n_ctx_orig: int = 0
    sections: tuple[int, ...] = ()  # imrope: rope.dimension_sections (t, h, w, e)


@runtime_checkable
class Ops(Protocol):
    """The op set of a backend. Arrays in and out are the backend's own type."""

    name: str
    device_name: str  # what the backend runs on, e.g. the GPU's or the CPU's model name
    kv_dtype: str  # default type of KV cache cells: "f32", "f16" or "q8_0"
    kv_types: tuple[str, ...]  # the KV cell types the backend stores

    # -- memory ---------------------------------------------------------------------------------
    def upload(self, qt: QTensor) -> Weight: ...
    def from_numpy(self, a: np.ndarray) -> Array: ...
    def overwrite(self, dst: Array, a: np.ndarray) -> Array: ...  # dst's contents replaced by a
    def fill(self, dst: Array, value: float, dtype: str) -> Array: ...  # every element of dst set to value
    def to_numpy(self, x: Array) -> np.ndarray: ...
    def zeros(self, shape: tuple[int, ...], dtype: str) -> Array: ...  # dtype: "f32" "f16" "i32" "i8"
    def kv_cells(self, shape: tuple[int, ...], dtype: str) -> Any: ...  # zeroed (S, H, D) cells of a KV type
    def full(self, shape: tuple[int, ...], value: float, dtype: str) -> Array: ...
    def capabilities(self) -> dict[str, frozenset[GGMLType]]: ...

    # -- shapes -----------------------------------------------------------------------------------
    def reshape(self, x: Array, shape: tuple[int, ...]) -> Array: ...
    def split(self, x: Array, sizes: Iterable[int]) -> list[Array]: ...  # along the last axis
    def slice_rows(self, x: Array, start: int, stop: int) -> Array: ...  # x[start:stop] (first axis)
    def concat_rows(self, xs: list[Array]) -> Array: ...  # along the first axis

    # -- weight ops (kernel chosen by the weight's ggml type) ------------------------------------
    def embed(self, w: Weight, ids: Array) -> Array: ...  # (V, D)[ids] -> (T, D)
    def matmul(self, x: Array, w: Weight) -> Array: ...  # (..., K) x (N, K) -> (..., N)
    def matmul_experts(self, x: Array, w: Weight, ids: Array) -> Array: ...
    # x (T, K) or (T, k, K), w (E, N, K), ids (T, k) -> (T, k, N)

    # -- elementwise, norms ------------------------------------------------------------------------
    def add(self, a: Array, b: Array) -> Array: ...
    def mul(self, a: Array, b: Array) -> Array: ...
    def scale(self, x: Array, s: float) -> Array: ...
    def softcap(self, x: Array, cap: float) -> Array: ...  # cap * tanh(x / cap)
    def rms_norm(self, x: Array, w: Array | None, eps: float) -> Array: ...  # over the last axis
    def glu(self, gate: Array, up: Array, act: str) -> Array: ...
    # act(gate) * up; act "silu", "gelu" or "swiglu_oai" (gpt-oss: clamped, alpha 1.702, limit 7)
    def unary(self, x: Array, fn: str) -> Array: ...  # "sigmoid", "silu", "softplus", "gelu"

    # -- attention ---------------------------------------------------------------------------------
    def rope(self, x: Array, pos: Array, p: RopeParams, freq_factors: Array | None = None) -> Array: ...
    # x (T, H, Dh), pos (T,) int32
    def kv_write(self, cache_k: Array, cache_v: Array, cache_pos: Array, k: Array, v: Array,
                 pos: Array, slots: Array) -> None: ...
    # writes in place: cache_k[slots] = k, cache_v[slots] = v, cache_pos[slots] = pos;
    # cache_k (S, Hkv, Dh), cache_pos (S,) int32 (-1 = empty); k (T, Hkv, Dh); slots (T,) int32
    def attention(self, q: Array, k: Array, v: Array, q_pos: Array, kv_pos: Array, n_kv: int,
                  kq_scale: float, window: int = 0, softcap: float = 0.0,
                  sinks: Array | None = None) -> Array: ...
    # q (T, Hq, Dh), k/v caches (S, Hkv, D*), kv_pos (S,); only cells [0, n_kv) are read.
    # A key at position p0 is visible to a query at p1 iff 0 <= p0 <= p1 and (window == 0 or
    # p1 - p0 < window). Returns (T, Hq, Dv).

    # -- recurrent layers (Gated DeltaNet) ---------------------------------------------------------
    def conv1d_causal(self, x: Array, state: Array, w: Array) -> Array: ...
    # depthwise causal conv: x (T, C), state (K-1, C) = the previous K-1 inputs (updated in place),
    # w (C, K) with w[:, K-1] on the current input; returns (T, C), no activation
    def delta_net_recurrent(self, q: Array, k: Array, v: Array, g: Array, beta: Array,
                            state: Array) -> Array: ...
    # q, k (T, Hk, S); v (T, Hv, S), v-head h reads k-head h % Hk; g (decay log, <= 0) and beta (T, Hv);
    # state (Hv, S, S) indexed [head, key dim, value dim], updated in place. Per token:
    # S *= exp(g); d = beta * (v - S^T k); S += k d^T; o = S^T q / sqrt(S). Returns o (T, Hv, S).
    def delta_net_chunked(self, q: Array, k: Array, v: Array, g: Array, beta: Array, state: Array,
                          chunk: int = 64) -> Array: ...  # the same function, chunk by chunk

    # -- mixture of experts ---------------------------------------------------------------------------
    def router_topk(self, logits: Array, k: int, gating: str, norm_w: bool,
                    w_scale: float) -> tuple[Array, Array]: ...  # -> ids (T, k) int32, w (T, k) f32
    def weighted_sum(self, x: Array, w: Array) -> Array: ...  # (T, k, D), (T, k) -> (T, D)
    def weighted_sum_shared(self, x: Array, w: Array, shared: Array, gate: Array | None) -> Array: ...
    # weighted_sum(x, w) + shared * sigmoid(gate) (gate (T, 1); None: + shared); default in BaseOps
    def router_topk_shared(self, logits: Array, k: int, gating: str, norm_w: bool, w_scale: float,
                           shared_gate: Array) -> tuple[Array, Array]: ...
    # router_topk plus slot k: expert E = logits.shape[-1] (a shared expert folded into the stacks) with
    # weight sigmoid(shared_gate (T, 1)); -> ids (T, k + 1), w (T, k + 1); default in BaseOps

    # -- sampling -------------------------------------------------------------------------------------
    def argmax(self, x: Array) -> Array: ...  # over the last axis
    def top_logits(self, x: Array, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...  # (BaseOps: host)

    # -- fused (defaults in BaseOps) ----------------------------------------------------------------------
    def add_rms_norm(self, x: Array, r: Array, w: Array | None, eps: float) -> tuple[Array, Array]: ...
    def matmul_glu(self, x: Array, w_gate: Weight, w_up: Weight, act: str) -> Array: ...
    def matmuls(self, x: Array, ws: list[Weight]) -> list[Array]: ...  # [matmul(x, w) for w in ws]
    def matmul_experts_glu(self, x: Array, w_gate: Weight, w_up: Weight, ids: Array, act: str) -> Array: ...
    # glu(matmul_experts(x, w_gate, ids), matmul_experts(x, w_up, ids), act)
    def norm_rope(self, x: Array, w: Array | None, eps: float, pos: Array, p: RopeParams,
                  freq_factors: Array | None = None) -> Array: ...
    def norm_rope_kv_write(self, k: Array, w: Array | None, eps: float, v: Array, pos: Array, p: RopeParams,
                           freq_factors: Array | None, cache_k: Array, cache_v: Array, cache_pos: Array,
                           slots: Array) -> Array: ...
    def rope_kv_write(self, k: Array, v: Array, pos: Array, p: RopeParams, freq_factors: Array | None,
                      cache_k: Array, cache_v: Array, cache_pos: Array, slots: Array) -> Array: ...
    def rope_qk_kv_write(self, q: Array, k: Array, v: Array, pos: Array, p: RopeParams, freq_factors: Array | None,
                         cache_k: Array, cache_v: Array, cache_pos: Array, slots: Array, q_norm: Array | None = None,
                         k_norm: Array | None = None, eps: float = 0.0) -> Array: ...
    # a layer's Q rope and K rope + KV write (each after its per-head norm when given); -> rotated Q
    def rope_qk_attention(self, q: Array, k: Array, v: Array, pos: Array, p: RopeParams, freq_factors: Array | None,
                          cache_k: Array, cache_v: Array, cache_pos: Array, slots: Array, n_kv: int,
                          kq_scale: float, window: int = 0, sinks: Array | None = None, q_norm: Array | None = None,
                          k_norm: Array | None = None, eps: float = 0.0) -> Array: ...
    # attention(rope_qk_kv_write(q, k, v, ...), cache_k, cache_v, pos, cache_pos, n_kv, kq_scale, window, sinks=sinks)
    def rope_qk_attention_seqs(self, q: Array, k: Array, v: Array, pos: Array, p: RopeParams,
                               freq_factors: Array | None, kv: Any, kq_scale: float, window: int = 0,
                               sinks: Array | None = None, q_norm: Array | None = None, k_norm: Array | None = None,
                               eps: float = 0.0) -> Array: ...  # rope_qk_attention of each sequence of a group
    def kv_tables(self, group: Any) -> Any: ...  # a CacheGroup's cells as the backend's batched kernels find them
    def gated_delta_net(self, q: Array, k: Array, v: Array, g: Array, beta: Array, state: Array) -> Array: ...
    def conv_delta_rule(self, mixed: Array, alpha: Array, b: Array, conv_w: Array, dt_bias: Array | None, a: Array,
                        conv_state: Array, ssm_state: Array, heads: tuple[int, int, int], eps: float) -> Array: ...
    def conv_delta_rule_seqs(self, mixed: Array, alpha: Array, b: Array, conv_w: Array, dt_bias: Array | None,
                             a: Array, states: Any, heads: tuple[int, int, int], eps: float) -> Array: ...
    def delta_net_step(self, q: Array, k: Array, v: Array, alpha: Array, b: Array, dt_bias: Array, a: Array,
                       state: Array, eps: float) -> Array: ...
    # gated_delta_net from the raw projections: q, k L2-normed, g = softplus(alpha + dt_bias) * a, beta = sigmoid(b)
    def conv1d_causal_act(self, x: Array, state: Array, w: Array, act: str) -> Array: ...  # unary(conv1d_causal)
    def rms_norm_gated(self, x: Array, w: Array | None, eps: float, z: Array, act: str) -> Array: ...
    # rms_norm(x, w, eps) * unary(z, act)
    def run_step(self, forward: Any, cfg: Any, weights: Any, batch: Any, cache: Any) -> Array: ...
    def greedy_steps(self, forward: Any, cfg: Any, weights: Any, batch: Any, cache: Any, n: int) -> Any: ...
    def loop_steps(self, forward: Any, cfg: Any, weights: Any, batch: Any, cache: Any, n: int, params: Any = None,
                   uniforms: Any = None, top: int = 0) -> Any: ...
    # one whole model step: `forward(ops, cfg, weights, batch, cache)` unless the backend replays it


class BaseOps:
    """Default compositions of the fused ops; backends subclass this and implement the rest."""

    name = "base"
    device_name = "unknown device"
    kv_dtype = "f32"  # the KV cache cells' type when the caller does not choose one
    kv_types: tuple[str, ...] = ("f32", "f16")

    def check_kv_type(self, dtype: str) -> None:
        """BackendUnavailableError naming dtype unless the backend stores KV cells of it."""
        if dtype not in self.kv_types:
            raise BackendUnavailableError(f"the {self.name} backend stores KV cells as {' or '.join(self.kv_types)}, "
                                          f"not {dtype!r}")

    def kv_cells(self, shape, dtype):
        """Zeroed KV cells (S, H, D): an array of dtype "f32" / "f16", or `Q8Cells` for "q8_0" (D a multiple of 32)."""
        self.check_kv_type(dtype)
        if dtype != "q8_0":
            return self.zeros(shape, dtype)
        if shape[-1] % 32:
            raise BackendUnavailableError(f"a q8_0 KV cache needs head dims that are multiples of 32, got {shape[-1]}")
        return Q8Cells(self.zeros(shape, "i8"), self.zeros((*shape[:-1], shape[-1] // 32), "f16"))

    def run_step(self, forward, cfg, weights, batch, cache):
        """One model step; a backend may run it its own way (CUDA replays a captured decode graph)."""
        return forward(self, cfg, weights, batch, cache)

    def top_logits(self, x, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each row of logits x (..., n_vocab): its k best values, descending (rows, k) float32, their ids
        (rows, k) int64 and the row's log-sum-exp (rows,) float64 (NaN where its max is not finite), on the
        host: what sampling needs of a row (`engine.sampler.TopLogits`)."""
        a = np.asarray(self.to_numpy(x), np.float32)
        a = a.reshape(-1, a.shape[-1])
        k = max(1, min(int(k), a.shape[1]))
        part = np.argpartition(-a, k - 1, axis=1)[:, :k]
        v = np.take_along_axis(a, part, 1)
        order = np.argsort(-v, axis=1, kind="stable")
        m = a.max(1, keepdims=True).astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            lse = (m + np.log(np.exp(a - m).sum(1, keepdims=True)))[:, 0]
        return np.take_along_axis(v, order, 1), np.take_along_axis(part, order, 1).astype(np.int64), lse

    def greedy_steps(self, forward, cfg, weights, batch, cache, n):
        """Greedy decode of up to n tokens from the one-token `batch` on the device (each step's
        argmax is the next step's token), returning the ids of the steps it ran as a host array and
        leaving the cache state written (the caller advances `cache.n_past` and runs any steps left
        one by one); None where the backend runs none this way. With a `CacheGroup` (a batch of
        several sequences, one token each): (steps run, sequences) ids, each row's argmax its own."""
        return None

    def loop_steps(self, forward, cfg, weights, batch, cache, n, params=None, uniforms=None, top=0):
        """`greedy_steps` without waiting, or with each row's token drawn by its sampler settings (params (rows, 5):
        temperature, top_k, top_p, min_p, need; see `Sampler.device_row`) from its best `top` logits, uniforms[s, row]
        the s-th step's draw. Returns a pending chunk: `.n` steps launched (all n, or fewer where the device could
        run fewer), `.ids()` waits for their ids (steps, rows) (-1: that row's logits were not finite), `.follow(m,
        uniforms)` launches m more steps from where they end (before they are read; None where it cannot). None where
        the backend has no such loop."""
        return None

    def overwrite(self, dst, a: np.ndarray):
        """The array to use in place of `dst` holding `a`: a new one here; a backend whose captured
        steps hold `dst`'s address copies into it and returns it."""
        return self.from_numpy(a)

    def fill(self, dst, value, dtype):
        """`overwrite` with `value` in every element (dst's dtype: "f32" "f16" "i32"); a backend can
        fill on the device instead of copying a host array."""
        return self.overwrite(dst, np.full(tuple(dst.shape), value, np.int32 if dtype == "i32" else np.float32))

    def add_rms_norm(self, x, r, w, eps):
        """(x + r, rms_norm(x + r) * w): the residual add followed by the next norm."""
        s = self.add(x, r)
        return s, self.rms_norm(s, w, eps)

    def matmul_glu(self, x, w_gate, w_up, act):
        """act(x @ W_gate.T) * (x @ W_up.T)."""
        return self.glu(self.matmul(x, w_gate), self.matmul(x, w_up), act)

    def matmuls(self, x, ws):
        """x @ W.T for each weight of one input (a backend may run them in one launch)."""
        return [self.matmul(x, w) for w in ws]

    def weighted_sum_shared(self, x, w, shared, gate):
        """The experts' weighted sum plus a shared expert's output (T, D), scaled by sigmoid(gate (T, 1))."""
        s = shared if gate is None else self.mul(shared, self.unary(gate, "sigmoid"))
        return self.add(self.weighted_sum(x, w), s)

    def router_topk_shared(self, logits, k, gating, norm_w, w_scale, shared_gate):
        """router_topk, then slot k: the folded shared expert E (logits.shape[-1]) with weight
        sigmoid(shared_gate), as `weighted_sum_shared` scales it (this default goes through the host)."""
        ids, w = self.router_topk(logits, k, gating, norm_w, w_scale)
        ids, w = self.to_numpy(ids), self.to_numpy(w)
        g = self.to_numpy(shared_gate).reshape(-1, 1).astype(np.float32)
        sig = np.float32(1) / (np.float32(1) + np.exp(-g))
        shared = np.full((ids.shape[0], 1), logits.shape[-1], np.int32)
        return (self.from_numpy(np.concatenate([ids, shared], 1)),
                self.from_numpy(np.concatenate([w, sig], 1).astype(np.float32)))

    def matmul_experts_glu(self, x, w_gate, w_up, ids, act):
        """act(x @ W_gate[e].T) * (x @ W_up[e].T) over the experts `ids` selected (T, k, N)."""
        return self.glu(self.matmul_experts(x, w_gate, ids), self.matmul_experts(x, w_up, ids), act)

    def norm_rope(self, x, w, eps, pos, p, freq_factors=None):
        """rope(rms_norm(x, w, eps)): the per-head q (or k) norm, then the rotation."""
        return self.rope(self.rms_norm(x, w, eps), pos, p, freq_factors)

    def norm_rope_kv_write(self, k, w, eps, v, pos, p, freq_factors, cache_k, cache_v, cache_pos, slots):
        """rope_kv_write of rms_norm(k, w, eps)."""
        return self.rope_kv_write(self.rms_norm(k, w, eps), v, pos, p, freq_factors, cache_k, cache_v, cache_pos,
                                  slots)

    def rope_kv_write(self, k, v, pos, p, freq_factors, cache_k, cache_v, cache_pos, slots):
        """Rotate K, store K and V in the cache cells `slots`; returns the rotated K."""
        k = self.rope(k, pos, p, freq_factors)
        self.kv_write(cache_k, cache_v, cache_pos, k, v, pos, slots)
        return k

    def rope_qk_kv_write(self, q, k, v, pos, p, freq_factors, cache_k, cache_v, cache_pos, slots, q_norm=None,
                         k_norm=None, eps=0.0):
        """A layer's Q and K rope: norm_rope (or rope) of Q, then norm_rope_kv_write (or rope_kv_write)
        of K, in this order (a backend may join the two itself); q_norm / k_norm are the per-head norm
        weights, None for a plain rope. Returns the rotated Q."""
        if q_norm is None:
            q = self.rope(q, pos, p, freq_factors)
        else:
            q = self.norm_rope(q, q_norm, eps, pos, p, freq_factors)
        if k_norm is None:
            self.rope_kv_write(k, v, pos, p, freq_factors, cache_k, cache_v, cache_pos, slots)
        else:
            self.norm_rope_kv_write(k, k_norm, eps, v, pos, p, freq_factors, cache_k, cache_v, cache_pos, slots)
        return q

    def rope_qk_attention(self, q, k, v, pos, p, freq_factors, cache_k, cache_v, cache_pos, slots, n_kv, kq_scale,
                          window=0, sinks=None, q_norm=None, k_norm=None, eps=0.0):
        """rope_qk_kv_write, then the attention of the rotated Q (at positions pos) over the cache."""
        q = self.rope_qk_kv_write(q, k, v, pos, p, freq_factors, cache_k, cache_v, cache_pos, slots, q_norm, k_norm,
                                  eps)
        return self.attention(q, cache_k, cache_v, pos, cache_pos, n_kv, kq_scale, window=window, sinks=sinks)

    def rope_qk_attention_seqs(self, q, k, v, pos, p, freq_factors, kv, kq_scale, window=0, sinks=None, q_norm=None,
                               k_norm=None, eps=0.0):
        """rope_qk_attention of several sequences' rows, each over its own cells: kv is a `GroupLayer` (the rows
        of kv.parts[i] are the next kv.counts[i]); a backend may do all of them in one launch (`kv_tables`)."""
        return self._each_seq(kv, (q, k, v, pos), lambda c, q, k, v, pos: self.rope_qk_attention(
            q, k, v, pos, p, freq_factors, c.k, c.v, c.pos, c.slots, c.n_kv, kq_scale, window, sinks, q_norm, k_norm,
            eps))

    def _each_seq(self, group_layer, xs, fn):
        """fn(sequence i's part of `group_layer`, its rows of each of xs) for every sequence, concatenated by rows."""
        outs, r0 = [], 0
        for n, part in zip(group_layer.counts, group_layer.parts):
            outs.append(fn(part, *(self.slice_rows(x, r0, r0 + n) for x in xs)))
            r0 += n
        return self.concat_rows(outs)

    def kv_tables(self, group):
        """What a backend's batched kernels read to find each sequence's cells of a `CacheGroup` (indexed by layer),
        made at `CacheGroup.begin`; None here (the sequences are then attended one at a time)."""
        return None

    def concat_rows(self, xs):
        """The arrays one after the other along the first axis (through the host here)."""
        return self.from_numpy(np.concatenate([self.to_numpy(x) for x in xs]))

    def gated_delta_net(self, q, k, v, g, beta, state):
        """The delta rule: the chunked (parallel) form for a prompt, the recurrence for one token."""
        if q.shape[0] > 1:
            return self.delta_net_chunked(q, k, v, g, beta, state)
        return self.delta_net_recurrent(q, k, v, g, beta, state)

    def delta_net_step(self, q, k, v, alpha, b, dt_bias, a, state, eps):
        """gated_delta_net from a Gated DeltaNet layer's raw projections: q, k (T, Hk, S) L2-normalized
        over S as llama.cpp does (rms_norm with eps / S, times 1 / sqrt(S)), the log decay
        g = softplus(alpha + dt_bias) * a and beta = sigmoid(b), alpha and b (T, Hv), dt_bias and a (Hv,)."""
        beta = self.unary(b, "sigmoid")
        g = self.mul(self.unary(self.add(alpha, dt_bias), "softplus"), a)
        n = q.shape[-1]
        q, k = (self.scale(self.rms_norm(x, None, eps / n), 1.0 / float(np.sqrt(n))) for x in (q, k))
        return self.gated_delta_net(q, k, v, g, beta, state)

    def conv1d_causal_act(self, x, state, w, act):
        """unary(conv1d_causal(x, state, w), act)."""
        return self.unary(self.conv1d_causal(x, state, w), act)

    def conv_delta_rule(self, mixed, alpha, b, conv_w, dt_bias, a, conv_state, ssm_state, heads, eps):
        """A Gated DeltaNet layer's recurrent part for one sequence: the causal conv (silu) of `mixed`
        (T, 2 Hk S + Hv S) over `conv_state`, split into q, k (Hk heads) and v (Hv heads) of S, then
        `delta_net_step` on `ssm_state` (both states updated in place); heads = (Hk, Hv, S). (T, Hv, S)."""
        hk, hv, s = heads
        conv = self.conv1d_causal_act(mixed, conv_state, conv_w, "silu")
        q, k, v = self.split(conv, (hk * s, hk * s, hv * s))
        T = mixed.shape[0]
        return self.delta_net_step(self.reshape(q, (T, hk, s)), self.reshape(k, (T, hk, s)),
                                   self.reshape(v, (T, hv, s)), alpha, b, dt_bias, a, ssm_state, eps)

    def conv_delta_rule_seqs(self, mixed, alpha, b, conv_w, dt_bias, a, states, heads, eps):
        """conv_delta_rule of several sequences' rows, each on its own state: states is a `GroupLayer` (the rows of
        states.parts[i], a `LayerState`, are the next states.counts[i]); a backend may do all of them at once."""
        return self._each_seq(states, (mixed, alpha, b), lambda st, mixed, alpha, b: self.conv_delta_rule(
            mixed, alpha, b, conv_w, dt_bias, a, st.conv, st.ssm, heads, eps))

    def rms_norm_gated(self, x, w, eps, z, act):
        """rms_norm(x, w, eps) * unary(z, act) (z of x's shape)."""
        return self.mul(self.rms_norm(x, w, eps), self.unary(z, act))


@dataclass(frozen=True)
class WeightUse:
    """One weight and the op that consumes it (for the load-time capability check)."""

    op: str  # one of WEIGHT_OPS
    tensor: str
    ggml_type: GGMLType


def check_capabilities(ops: Ops, uses: Iterable[WeightUse], where: str = "") -> None:
    """Raise BackendUnavailableError listing every (op, ggml type) pair `ops` cannot run."""
    caps = ops.capabilities()
    missing: dict[tuple[str, str], list[str]] = {}
    for u in uses:
        if u.ggml_type not in caps.get(u.op, frozenset()):
            missing.setdefault((u.op, GGMLType(u.ggml_type).name), []).append(u.tensor)
    if missing:
        lines = [f"  {op} x {t}: {', '.join(names[:3])}{' ...' if len(names) > 3 else ''}"
                 for (op, t), names in sorted(missing.items())]
        loc = f" for {where}" if where else ""
        raise BackendUnavailableError(
            f"backend {ops.name!r} lacks {len(missing)} (op, ggml type) pair(s){loc}:\n" + "\n".join(lines))
