"""The Vulkan/Metal backend: the `Ops` interface on wgpu compute shaders (WGSL in `shaders/`).

Activations are `VkArray`s: a float32 (or int32) storage buffer plus its row-major shape; every op
takes its output from the device's buffer pool and records its dispatch into the device's pending
command encoder, so a model step is one command buffer that is submitted when the host reads a
result (`to_numpy`). Weights are
repacked at upload (`weights.py`); matmul, matmul over selected experts and embed splice the weight
type's WGSL dequantizer into their kernel. A 2-D weight larger than one storage binding may hold (the
adapter's limit) is uploaded in parts of whole rows: matmul runs per part into column blocks, embed
per part for the tokens whose rows it holds.

Q4_K / Q6_K products of a few tokens (`matvec.py`) run on 8-bit activations (`shaders/lib/q8.wgsl`:
int8 codes per 32 values, laid out so that a matvec's lanes read them coalesced) with integer dot
products (`mvq.wgsl`, `mvq_glu.wgsl`; one dispatch per MVQ_ROWS tokens, so prefill reads each weight
T / MVQ_ROWS times). The activations are quantized by the kernel that produces them
where it can (rms_norm / add_rms_norm, the gate/up GLU, attention: `VkArray.q8`), else once by
`quant_q8` (shared by the q, k, v projections of one input). Stacked Q/K/V weights (`fuse_qkv`) are
one matvec whose outputs are the split's column blocks. `matvec_q8=False` keeps f32 activations
(`matvec.wgsl`, one token).

Fusion without model changes: the fused ops of `base.py` have kernels (add + rms_norm, matmul + GLU,
rope + KV write), and a few producers are deferred (`VkArray.pending`) so that their consumer can
fold them in: a per-head rms_norm into the following rope (or rope + KV write), a matmul into the
add of its bias row, a matmul over experts into the add of the selected experts' bias rows. A
deferred dispatch that nothing fuses runs when its buffer is first bound. A one-token
`rope_qk_kv_write` (the Q and K norms + rope and the KV-cache write) is deferred whole and done by the
attention over that cache, inside its first dispatch (FUSE; one-token attention is split over the
cache: attention.py). Inputs of deferred ops are
activations, which no op rewrites, so running them later gives the same result.

RoPE angles are built on the host by the NumPy backend's `rope_cache` (the positions' host copy
travels with the array made by `from_numpy`), so the tables equal the reference bit for bit.
Router top-k, the weighted expert sum, causal conv1d and the delta rule run on the GPU, so no step
syncs with the host (the delta rule's chunked form runs the recurrence token by token inside one
dispatch). Only router top-k with k > 64 and delta-rule states wider than 256 go through the NumPy
backend on a host copy. KV caches asked for as f16 are stored as f32.

Single-token steps go through `run_step`: recorded once per (model, cache) and then replayed
(`replay.py`); the ops that put step-dependent data in buffers (the RoPE tables, the attention
extent) register how to rebuild it while a step is recorded.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import replace
from typing import Any, Iterable

import numpy as np

from zinc.backends.base import BaseOps, QTensor, RopeParams
from zinc.backends.cpu.ops import CpuOps, rope_cache
from zinc.backends.vulkan.attention import record_attention
from zinc.backends.vulkan.device import Device, grid
from zinc.backends.vulkan.matvec import MATVEC_CONFIG, MATVEC_XS, MVQ_ROWS, MVQ_SHAPES, MatvecOps, _q8_row_words
from zinc.backends.vulkan.weights import DEQUANT, MATVEC, VkWeight, dequant_src, repack
from zinc.errors import BackendUnavailableError
from zinc.gguf.constants import GGMLType

_NP = {"f32": np.float32, "f16": np.float32, "i32": np.int32}
_BINARY = {"add": "a + b", "mul": "a * b"}
_UNARY = {"scale": "x * s", "softcap": "tanh(x * (1.0 / s)) * s", "sigmoid": "1.0 / (1.0 + exp(-x))",
          "silu": "x / (1.0 + exp(-x))", "softplus": "select(log(1.0 + exp(x)), x, x > 20.0)",
          "gelu": "gelu(x)", "gelu_table": "gelu_table(x)"}
_GLU = {"silu": "g / (1.0 + exp(-g)) * u", "gelu": "gelu(g) * u", "gelu_table": "gelu_table(g) * u",
        "swiglu_oai": "swiglu_oai(g, u)"}
_GATING = {"softmax": 0, "sigmoid": 1, "softmax_weight": 2}


class VkArray:
    """A device array: buffer, row-major shape, dtype ("f32" or "i32"), optional host copy of the data.

    `q8`: the data as rows of K 8-bit activations for the decode matvecs, made by the producer (norms,
    GLU, attention) or on first use (shared by the q, k, v projections of one input); reshapes keep it.
    `pending`: a callable that records the deferred dispatch filling the buffer; it runs the first
    time `buf` is read. `lazy` says what that dispatch computes, so that the consumer can run one fused
    kernel instead (leaving this array deferred): ("rms_norm", x, w, eps) for a per-head norm,
    ("matmul", record_with_bias) and ("experts", ids, record_with_bias) for weight products,
    ("embed", w, ids) for an expert-bias lookup.
    """

    def __init__(self, buf: Any, shape: tuple[int, ...], dtype: str = "f32", host: np.ndarray | None = None):
        self._buf, self.shape, self.dtype, self.host = buf, tuple(int(s) for s in shape), dtype, host
        self.pending: Any = None
        self.lazy: tuple | None = None
        self.q8: tuple[int, Any] | None = None  # (K, buffer): rows of K as 8-bit activations (lib/q8.wgsl)

    @property
    def buf(self) -> Any:
        if self.pending is not None:
            record, self.pending = self.pending, None
            record()
        return self._buf

    @buf.setter
    def buf(self, b: Any) -> None:
        self._buf, self.q8 = b, None

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def nbytes(self) -> int:
        return 4 * self.size


class _StepInputs:
    """What the step-input producers of a recording read from a batch (greedy_steps): the position."""

    def __init__(self, pos_host: np.ndarray) -> None:
        self.pos_host = pos_host


class VulkanOps(MatvecOps, BaseOps):
    """The wgpu implementation of `zinc.backends.base.Ops`."""

    name = "vulkan"
    fuse_qkv = True  # load_weights stacks Q, K, V of one type: one matvec, its outputs split in place (split)

    def __init__(self, allow_cpu_adapter: bool = False, gelu: str = "table", replay: bool = True,
                 matvec_q8: bool = True, matvec: dict[str, tuple[int, int, int]] | None = None,
                 matvec_xs: dict[str, bool] | None = None, kv_dtype: str = "f32", **device_options: Any) -> None:
        """replay: record single-token steps once and replay them (replay.py); matvec_q8: Q4_K / Q6_K
        products of up to MVQ_ROWS tokens run on 8-bit activations with integer dot products (else one
        token on f32 activations); matvec: (L, R, S) per kernel over MATVEC_CONFIG; matvec_xs: over
        MATVEC_XS; kv_dtype: the KV cells' default type ("f32", or "f16" stored as f32; no "q8_0");
        device_options go to `Device` (subgroups, submit_every, raw)."""
        if gelu not in ("table", "exact"):
            raise ValueError(f"gelu must be 'table' or 'exact', got {gelu!r}")
        self.check_kv_type(kv_dtype)
        self.kv_dtype = kv_dtype
        self.dev = Device(allow_cpu_adapter=allow_cpu_adapter, **device_options)
        self.device_name = str(self.dev.info.get("device") or "Vulkan adapter")
        self.gelu_mode = gelu
        self._cpu = CpuOps(gelu=gelu)
        self.matvec = {**MATVEC_CONFIG, **(matvec or {})}  # (lanes per row L, rows per lane R, row slots S)
        self.matvec_xs = {**MATVEC_XS, **(matvec_xs or {})}  # mvq kernels staging activations (_MVQ_X)
        self.matvec_shapes = dict(MVQ_SHAPES)  # per-shape mvq configs (_mv_cfg)
        self._wg_bytes = int(self.dev.device.limits.get("max-compute-workgroup-storage-size", 16384))
        self.matvec_q8 = matvec_q8
        self._dummy = self.dev.buffer(16)  # unused read-only bindings
        self._dummy_w = self.dev.buffer(16)  # unused writable bindings
        self._dummy_ws = [self.dev.buffer(16), self.dev.buffer(16)]
        self.replay = replay
        self._replayer: Any = None
        self._recording: Any = None  # the Recording of the step being recorded, and its batch
        self._rec_batch: Any = None
        self._q_rope: Any = None  # weakref to the last deferred norm + rope (see rope())
        self._mv_pending: list[tuple] = []  # weakrefs (y, x, weight, y's target) of deferred products: _mvq_pair

    def run_step(self, forward, cfg, weights, batch, cache):
        """One model step; a single-token step of one sequence replays its recording (see replay.py)."""
        if batch.n != 1 or batch.seqs or not self.replay:
            return forward(self, cfg, weights, batch, cache)
        if self._replayer is None:
            from zinc.backends.vulkan.replay import StepReplayer

            self._replayer = StepReplayer(self)
        return self._replayer.run(forward, cfg, weights, batch, cache)

    def greedy_steps(self, forward, cfg, weights, batch, cache, n):
        """n greedy steps with the host out of the loop: each replayed step ends with its argmax, copied
        on the GPU into the token buffer of the next step and into `ids`. The host writes the other step
        inputs (position, cache cells, RoPE tables) ahead, through the queue, so a step still running
        keeps its own; it encodes step i + 1 while step i runs and reads the ids once at the end. The
        first step records the step if needed; an unreplayable step runs only that one (None: none)."""
        if batch.n != 1 or batch.seqs or not self.replay or n <= 0:
            return None
        p0 = int(batch.pos_host[0])
        out = self.run_step(forward, cfg, weights, batch, cache)  # step 0: host token, maybe recorded
        rec = self._replayer.find(forward, cfg, weights, batch, cache)
        if rec is None:
            return np.argmax(self.to_numpy(out)[-1:], axis=-1).astype(np.int32)
        ids = self.dev.buffer(4 * n)
        try:
            for i in range(n):
                if i:
                    cache.end()
                    cache.begin(np.array([p0 + i]))
                    step = _StepInputs(np.array([p0 + i], np.int64))
                    self.dev.replay(rec, [(buf, fn(step, cache)) for buf, fn in rec.inputs.values()
                                          if buf is not rec.tokens])
                    self._replayer.replays += 1
                tok = self.argmax(rec.out)
                self.dev.copy(tok.buf, 0, rec.tokens, 0, 4)
                self.dev.copy(tok.buf, 0, ids, 4 * i, 4)
            return np.frombuffer(self.dev.read(ids, 4 * n), np.int32).copy()
        finally:
            cache.n_past = p0  # as the caller began it: it advances n_past by the steps run
            cache.begin(np.array([p0]))

    # -- memory --------------------------------------------------------------------------------------
    def upload(self, qt: QTensor) -> VkWeight:
        """The repacked weight in one buffer, or a 2-D one over the adapter's binding limit in parts of
        whole rows (VkWeight.parts)."""
        data, row_words = repack(qt)
        limit = self.dev.max_binding
        if data.nbytes <= limit:
            return VkWeight(qt, self.dev.buffer_from(np.ascontiguousarray(data)), row_words)
        rows = limit // (4 * row_words)
        if len(qt.shape) != 2 or rows == 0:
            raise BackendUnavailableError(
                f"tensor {qt.name} {qt.shape} ({data.nbytes} bytes) exceeds the adapter's storage binding "
                f"limit of {limit} bytes and cannot be split by rows")
        raw, parts = qt.data.reshape(qt.shape[0], -1), []
        for r0 in range(0, qt.shape[0], rows):
            r1 = min(r0 + rows, qt.shape[0])
            part = replace(qt, name=f"{qt.name}[{r0}:{r1}]", shape=(r1 - r0, qt.shape[1]), data=raw[r0:r1].reshape(-1))
            parts.append((r0, VkWeight(part, self.dev.buffer_from(np.ascontiguousarray(data[r0:r1])), row_words)))
        return VkWeight(qt, None, row_words, parts)

    def from_numpy(self, a: np.ndarray) -> VkArray:
        a = np.asarray(a)
        dtype = "i32" if np.issubdtype(a.dtype, np.integer) else "f32"
        a = np.ascontiguousarray(a, _NP[dtype])
        return VkArray(self.dev.buffer_from(a, pooled=True), a.shape, dtype, host=a if a.size <= 65536 else None)

    def overwrite(self, dst: VkArray, a: np.ndarray) -> VkArray:
        """`dst` holding `a`, in place (recorded steps keep binding its buffer)."""
        a = np.ascontiguousarray(a, _NP[dst.dtype]).reshape(dst.shape)
        self.dev.flush()  # commands recorded so far read the old contents
        self.dev.device.queue.write_buffer(dst.buf, 0, a)
        dst.host = a.copy() if a.size <= 65536 else None
        dst.q8 = None
        return dst

    def fill(self, dst: VkArray, value: float, dtype: str) -> VkArray:
        """`dst` zeroed in place by a clear in the command stream (no host copy); other values through
        `overwrite`."""
        if value != 0:
            return super().fill(dst, value, dtype)
        self.dev.clear(dst.buf)
        dst.host = np.zeros(dst.shape, _NP[dst.dtype]) if dst.size <= 65536 else None
        dst.q8 = None
        return dst

    def to_numpy(self, x: VkArray) -> np.ndarray:
        if x.host is not None:
            return x.host.copy()
        raw = self.dev.read(x.buf, x.nbytes)
        return np.frombuffer(raw, _NP[x.dtype]).reshape(x.shape).copy()

    def zeros(self, shape: tuple[int, ...], dtype: str) -> VkArray:
        return self.full(shape, 0, dtype)

    def full(self, shape: tuple[int, ...], value: float, dtype: str) -> VkArray:
        a = np.full(shape, value, _NP[dtype])
        return VkArray(self.dev.buffer_from(a, pooled=True), a.shape, "i32" if dtype == "i32" else "f32")

    def capabilities(self) -> dict[str, frozenset[GGMLType]]:
        types = frozenset(DEQUANT)
        return {"embed": types, "matmul": types, "matmul_experts": types}

    def _new(self, shape: tuple[int, ...], dtype: str = "f32") -> VkArray:
        return VkArray(self.dev.buffer(4 * math.prod(int(s) for s in shape)), shape, dtype)

    def _run(self, shader: str, uniform: Any, bufs: list[Any], groups: tuple[int, int, int],
             subs: dict[str, str] | None = None) -> None:
        self.dev.dispatch(self.dev.pipeline(shader, subs=subs), [uniform, *bufs], groups)

    # -- shapes ----------------------------------------------------------------------------------------
    def reshape(self, x: VkArray, shape: tuple[int, ...]) -> VkArray:
        shape = tuple(shape)
        if -1 in shape:
            known = int(np.prod([s for s in shape if s != -1]))
            shape = tuple(x.size // known if s == -1 else s for s in shape)
        host = x.host.reshape(shape) if x.host is not None else None
        y = VkArray(x.buf, shape, x.dtype, host)
        y.q8 = x.q8
        return y

    def split(self, x: VkArray, sizes: Iterable[int]) -> list[VkArray]:
        """Column blocks of x; up to three of a deferred 8-bit-activation matvec are its own outputs."""
        sizes = [int(s) for s in sizes]
        lz = x.lazy if x.pending is not None else None
        if lz and lz[0] == "matmul" and len(lz) == 3 and len(sizes) <= 3 and sum(sizes) == x.shape[-1]:
            out = [self._new((*x.shape[:-1], s)) for s in sizes]
            lz[1](out)
            return out
        C = x.shape[-1]
        R = x.size // C
        out, c0 = [], 0
        for s in sizes:
            y = self._new((*x.shape[:-1], s), x.dtype)
            u = self.dev.uniform("IIIIII", R, s, C, c0, s, 0)
            self._run("copy_cols", u, [x.buf, y.buf], grid(-(-R * s // 64)))
            out.append(y)
            c0 += s
        return out

    def slice_rows(self, x: VkArray, start: int, stop: int) -> VkArray:
        row = x.size // x.shape[0]
        y = self._new((stop - start, *x.shape[1:]), x.dtype)
        self.dev.copy(x.buf, 4 * start * row, y.buf, 0, y.nbytes)
        return y

    def concat_rows(self, xs: list[VkArray]) -> VkArray:
        y = self._new((sum(x.shape[0] for x in xs), *xs[0].shape[1:]), xs[0].dtype)
        off = 0
        for x in xs:
            self.dev.copy(x.buf, 0, y.buf, off, x.nbytes)
            off += x.nbytes
        return y

    # -- weight ops ----------------------------------------------------------------------------------------
    def _concat_cols(self, parts: list[VkArray]) -> VkArray:
        """The arrays side by side along the last axis (rows of equal count)."""
        C = sum(p.shape[-1] for p in parts)
        y = self._new((*parts[0].shape[:-1], C))
        d0 = 0
        for p in parts:
            R, s = p.size // p.shape[-1], p.shape[-1]
            self._run("copy_cols", self.dev.uniform("IIIIII", R, s, s, 0, C, d0), [p.buf, y.buf], grid(-(-R * s // 64)))
            d0 += s
        return y

    def embed(self, w: VkWeight, ids: VkArray) -> VkArray:
        K = w.shape[-1]
        T = ids.size
        nchunk = -(-K // 32)
        y = self._new((*ids.shape, K))
        out = y._buf  # the closure must not hold y (no reference cycle: pooled buffers free promptly)

        def record() -> None:  # a table in parts (VkWeight.parts): each part's dispatch writes its tokens
            for r0, p in w.parts or [(0, w)]:
                u = self.dev.uniform("IIIIII", p.shape[0], K, T, p.row_words, nchunk, r0)
                self._run("embed", u, [ids.buf, p.buf, out], grid(-(-T * nchunk // 64)), {"DEQUANT": dequant_src(p)})
        if ids.ndim == 2 and w.ggml_type == GGMLType.F32 and len(w.shape) == 2 and not w.parts:  # expert bias: add()
            y.pending, y.lazy = record, ("embed", w, ids)
        else:
            record()
        return y

    def matmul(self, x: VkArray, w: VkWeight) -> VkArray:
        """Deferred: a following add of a bias row fuses into it (see add())."""
        N, K = w.shape[0], w.shape[-1]
        if len(w.shape) != 2 or x.shape[-1] != K:
            raise ValueError(f"matmul: x {x.shape} does not match weight {w.qt.name} {w.shape}")
        if w.parts:  # a weight over the binding limit: a product per part of its rows, side by side
            return self._concat_cols([self.matmul(x, p) for _, p in w.parts])
        T = x.size // K
        nchunk, n_tiles = -(-K // 32), -(-T // 4)

        if self._mvq_ok(x, T, (w,)):
            def record(out: VkArray, bias: Any = None) -> VkArray:
                self._mvq("mvq", x, (w,), [out], bias, {})
                return out

            def record_split(outs: list[VkArray]) -> None:
                self._mvq("mvq", x, (w,), outs, None, {})
            y = self._deferred((*x.shape[:-1], N), record, "matmul", record_split)
            target = VkArray(y._buf, y.shape)
            y.pending = lambda: self._mvq_pair(x, w, target)
            live = [e for e in self._mv_pending if getattr(e[0](), "pending", None) is not None]
            self._mv_pending = live + [(weakref.ref(y), weakref.ref(x), w, weakref.ref(target))]
            return y
        if T == 1 and w.ggml_type in MATVEC and x.dtype == "f32":
            def record(out: VkArray, bias: Any = None) -> VkArray:
                self._matvec("matvec", x, (w,), out, bias, {})
                return out
            return self._deferred((*x.shape[:-1], N), record, "matmul")

        def record(out: VkArray, bias: Any = None) -> VkArray:
            u = self.dev.uniform("IIIIIII", N, K, T, w.row_words, nchunk, n_tiles, int(bias is not None))
            bufs = [x.buf, w.buf, out._buf, bias.buf if bias is not None else self._dummy]
            self._run("matmul", u, bufs, grid(N * n_tiles), {"DEQUANT": dequant_src(w)})
            return out
        return self._deferred((*x.shape[:-1], N), record, "matmul")

    def _deferred(self, shape: tuple[int, ...], record: Any, kind: str, *info: Any) -> VkArray:
        """An output whose producing dispatch `record(out, bias=None)` runs on first use or fused."""
        y = self._new(shape)
        target = VkArray(y._buf, shape)  # not y itself: no reference cycle
        y.pending = lambda: record(target)
        y.lazy = (kind, *info, lambda bias: record(self._new(shape), bias))
        return y

    def matmul_experts(self, x: VkArray, w: VkWeight, ids: VkArray) -> VkArray:
        """Deferred: a following add of the selected experts' bias rows fuses into it (see add())."""
        E, N, K = w.shape
        T, k = ids.shape
        if x.shape[-1] != K or x.size not in (T * K, T * k * K):
            raise ValueError(f"matmul_experts: x {x.shape}, ids {ids.shape} do not match {w.qt.name} {w.shape}")

        def record(out: VkArray, bias: Any = None) -> VkArray:
            u = self.dev.uniform("IIIIIIII", N, K, T * k, w.row_words, -(-K // 32), k, int(x.size == T * k * K),
                                 int(bias is not None))
            bufs = [x.buf, w.buf, ids.buf, out._buf, bias.buf if bias is not None else self._dummy]
            self._run("matmul_experts", u, bufs, grid(N * T * k), {"DEQUANT": dequant_src(w)})
            return out
        return self._deferred((T, k, N), record, "experts", ids)

    def matmul_glu(self, x: VkArray, w_gate: VkWeight, w_up: VkWeight, act: str) -> VkArray:
        N, K = w_gate.shape[0], w_gate.shape[-1]
        if (len(w_gate.shape) != 2 or w_gate.shape != w_up.shape or x.shape[-1] != K or act not in _GLU
                or w_gate.parts or w_up.parts):
            return super().matmul_glu(x, w_gate, w_up, act)
        T = x.size // K
        y = self._new((*x.shape[:-1], N))
        if self._mvq_ok(x, T, (w_gate, w_up)):
            self._mvq("mvq_glu", x, (w_gate, w_up), [y], None, {"EXPR": _GLU[self._act(act)]})
            return y
        if (T == 1 and w_gate.ggml_type in MATVEC and w_up.ggml_type == w_gate.ggml_type
                and w_up.row_words == w_gate.row_words):
            self._matvec("matvec_glu", x, (w_gate, w_up), y, None, {"EXPR": _GLU[self._act(act)]})
            return y
        n_tiles = -(-T // 4)
        u = self.dev.uniform("IIIIIII", N, K, T, w_gate.row_words, -(-K // 32), n_tiles, w_up.row_words)
        subs = {"DEQUANT": dequant_src(w_gate), "DEQUANT2": dequant_src(w_up, "2"), "EXPR": _GLU[self._act(act)]}
        self._run("matmul_glu", u, [x.buf, w_gate.buf, w_up.buf, y.buf], grid(N * n_tiles), subs)
        return y

    # -- elementwise, norms ----------------------------------------------------------------------------------
    def _binary(self, a: VkArray, b: VkArray, op: str, out: Any = None) -> VkArray | None:
        """a op b into a new array (or into the buffer `out`, returning None)."""
        shape = np.broadcast_shapes(a.shape, b.shape)
        if len(shape) > 4:
            raise ValueError(f"vulkan {op}: more than 4 dims {shape}")
        y = self._new(shape) if out is None else None
        sh = (1,) * (4 - len(shape)) + tuple(shape)
        strides = [_bstrides(s, sh) for s in (a.shape, b.shape)]
        u = self.dev.uniform("4I4I4II", *sh, *strides[0], *strides[1], math.prod(shape))
        self._run("binary", u, [a.buf, b.buf, y.buf if out is None else out], grid(-(-math.prod(shape) // 64)),
                  {"EXPR": _BINARY[op]})
        return y

    def add(self, a: VkArray, b: VkArray) -> VkArray:
        """a + b; a deferred matmul plus its bias row, or deferred experts plus their bias lookup, fuse.
        A same-shape add is deferred itself: a following rms_norm of the sum runs add_rms_norm instead."""
        lz = a.lazy if a.pending is not None else None
        if lz and lz[0] == "matmul" and b.ndim == 1 and b.size == a.shape[-1] and b.dtype == "f32":
            return lz[-1](b)
        if (lz and lz[0] == "experts" and b.pending is not None and b.lazy and b.lazy[0] == "embed"
                and b.lazy[2] is lz[1] and b.shape == a.shape):
            return lz[-1](b.lazy[1])
        if a.shape == b.shape and a.dtype == b.dtype == "f32":
            y = self._new(a.shape)
            out = y._buf  # not y itself: no reference cycle
            y.pending, y.lazy = (lambda: self._binary(a, b, "add", out)), ("add", a, b)
            return y
        return self._binary(a, b, "add")

    def mul(self, a: VkArray, b: VkArray) -> VkArray:
        return self._binary(a, b, "mul")

    def _unary(self, x: VkArray, fn: str, s: float = 0.0) -> VkArray:
        y = self._new(x.shape)
        u = self.dev.uniform("If", x.size, s)
        self._run("unary", u, [x.buf, y.buf], grid(-(-x.size // 64)), {"EXPR": _UNARY[fn]})
        return y

    def scale(self, x: VkArray, s: float) -> VkArray:
        return self._unary(x, "scale", s)

    def softcap(self, x: VkArray, cap: float) -> VkArray:
        return self._unary(x, "softcap", cap)

    def unary(self, x: VkArray, fn: str) -> VkArray:
        if fn not in ("sigmoid", "silu", "softplus", "gelu"):
            raise ValueError(f"unknown unary function {fn!r}")
        return self._unary(x, "gelu_table" if fn == "gelu" and self.gelu_mode == "table" else fn)

    def rms_norm(self, x: VkArray, w: VkArray | None, eps: float) -> VkArray:
        D = x.shape[-1]
        if w is not None and w.size != D:
            raise ValueError(f"rms_norm: weight of {w.size} elements for rows of {D}")
        rows = x.size // D
        y = self._new(x.shape)
        if x.pending is not None and x.lazy and x.lazy[0] == "add":  # the norm of a deferred residual add: fuse
            _, a, b = x.lazy
            x.pending = x.lazy = None
            self._norm(a, b, w, eps, y, x)
            return y
        if x.ndim != 3:
            self._norm(x, None, w, eps, y)
            return y
        u = self.dev.uniform("IIIf", D, rows, int(w is not None), eps)
        out = y._buf  # not y itself: no reference cycle

        def record() -> None:
            self._run("rms_norm", u, [x.buf, (w.buf if w is not None else self._dummy), out], grid(rows))
        y.pending, y.lazy = record, ("rms_norm", x, w, eps)  # per-head norm: a rope may fuse it (_norm_rope)
        return y

    def _norm(self, x: VkArray, r: VkArray | None, w: VkArray | None, eps: float, y: VkArray,
              s: VkArray | None = None) -> None:
        """y = rms_norm(x (+ r, written to s)) * w; the vec4 kernel spreads a row over workgroups of
        1024 values and also writes y's 8-bit activations for a few rows (what the decode matvecs read)."""
        D = x.shape[-1]
        rows = x.size // D
        wb = w.buf if w is not None else self._dummy
        if D % 4:
            u = self.dev.uniform("IIIf", D, rows, int(w is not None), eps)
            if r is None:
                self._run("rms_norm", u, [x.buf, wb, y.buf], grid(rows))
            else:
                self._run("add_rms_norm", u, [x.buf, r.buf, wb, s.buf, y.buf], grid(rows))
            return
        q8 = self.matvec_q8 and rows <= MVQ_ROWS and D % 256 == 0
        y.q8 = (D, self.dev.buffer(4 * rows * _q8_row_words(D))) if q8 else None
        u = self.dev.uniform("IIIfII", D, rows, int(w is not None), eps, int(r is not None), int(q8))
        bufs = [x.buf, r.buf if r is not None else self._dummy, wb, s.buf if s is not None else self._dummy_w,
                y.buf, y.q8[1] if q8 else self._dummy_w]
        ns = -(-D // 1024)  # workgroups per row (each normalizes 1024 values)
        self._run("rms_norm4", u, bufs, grid(rows * ns), {"NS": str(ns)})

    def add_rms_norm(self, x: VkArray, r: VkArray, w: VkArray | None, eps: float) -> tuple[VkArray, VkArray]:
        D = x.shape[-1]
        if x.shape != r.shape or (w is not None and w.size != D):
            return super().add_rms_norm(x, r, w, eps)
        s, y = self._new(x.shape), self._new(x.shape)
        self._norm(x, r, w, eps, y, s)
        return s, y

    def _act(self, act: str) -> str:
        if act not in _GLU or act == "gelu_table":
            raise ValueError(f"unknown GLU activation {act!r}")
        return "gelu_table" if act == "gelu" and self.gelu_mode == "table" else act

    def glu(self, gate: VkArray, up: VkArray, act: str) -> VkArray:
        key = self._act(act)
        if gate.shape != up.shape:
            return super().glu(gate, up, act)
        y = self._new(gate.shape)
        self._run("glu", self.dev.uniform("I", y.size), [gate.buf, up.buf, y.buf], grid(-(-y.size // 64)),
                  {"EXPR": _GLU[key]})
        return y

    # -- attention ---------------------------------------------------------------------------------------
    split_attention = True  # one-token attention split over the cache (attention.py)

    def _host(self, a: VkArray) -> np.ndarray:
        return a.host if a.host is not None else self.to_numpy(a)

    def _cossin(self, pos: VkArray, p: RopeParams, freq_factors: VkArray | None) -> tuple[np.ndarray, np.ndarray]:
        if p.mode not in ("norm", "neox", "imrope"):
            raise ValueError(f"unknown rope mode {p.mode!r}")
        ff = self._host(freq_factors) if freq_factors is not None else None
        return rope_cache(self._host(pos), p, ff)

    def _rope_table(self, pos: VkArray, p: RopeParams, freq_factors: VkArray | None, split: bool = False) -> Any:
        """The step's cos|sin table as one pooled buffer (or (cos, sin) with split), built once per step
        for all layers that share the positions and rope parameters."""
        def make() -> Any:
            cos, sin = self._cossin(pos, p, freq_factors)
            if split:
                bufs = self.dev.buffer_from(cos, pooled=True), self.dev.buffer_from(sin, pooled=True)
            else:
                bufs = self.dev.buffer_from(np.concatenate([cos.reshape(-1), sin.reshape(-1)]), pooled=True)
            rec = self._recording
            if rec is not None and pos is self._rec_batch.pos:  # a replay rebuilds the table
                ff = self._host(freq_factors) if freq_factors is not None else None

                def tables(bt: Any) -> tuple[np.ndarray, np.ndarray]:
                    return rope_cache(bt.pos_host, p, ff)
                if split:
                    for i, b in enumerate(bufs):
                        rec.input(b, lambda bt, c, i=i: tables(bt)[i])
                else:
                    rec.input(bufs, lambda bt, c: np.concatenate([t.reshape(-1) for t in tables(bt)]))
            return bufs
        key = ("rope", id(pos), p, id(freq_factors), split)
        return self.dev.step_memo(key, (pos, freq_factors), make)

    def _fusable_norm(self, x: VkArray) -> bool:
        """x is a pending per-head rms_norm of its own rows (so rope can apply the norm itself)."""
        return x.pending is not None and x.lazy is not None and x.lazy[0] == "rms_norm" and x.lazy[1].shape == x.shape

    def _norm_rope(self, x: VkArray, pos: VkArray, p: RopeParams, freq_factors: VkArray | None,
                   kv: tuple[VkArray, ...] | None = None, out: Any = None) -> VkArray:
        """rope(rms_norm(src, w)) from the pending norm `x` in one dispatch (into the buffer `out` if
        given); kv = (v, cache_k, cache_v, cache_pos, slots) also writes the cache, and then a deferred
        rope of a pending norm with the same positions and eps (the layer's Q) joins the dispatch."""
        _, src, w, eps = x.lazy
        T, H, Dh = x.shape
        y = self._new(x.shape) if out is None else VkArray(out, x.shape)
        v, ck, cv, cp, slots = kv if kv is not None else (None,) * 5
        Dv = v.size // (T * H) if v is not None else 0
        q = ql = None
        if kv is not None and self._q_rope is not None:
            q, self._q_rope = self._q_rope(), None
            ql = q.lazy if q is not None and q.pending is not None else None
            if not (ql and ql[2] is pos and ql[3] == p and ql[4] is freq_factors and ql[1].lazy[3] == eps
                    and q.shape[0] == T and q.shape[2] == Dh):
                ql = None
        q_src, q_w = (ql[1].lazy[1], ql[1].lazy[2]) if ql else (None, None)
        H2 = q.shape[1] if ql else 0
        u = self.dev.uniform("IIIIIIIIfII", T, H, Dh, p.n_dims, int(p.mode != "norm"), int(w is not None),
                             int(kv is not None), Dv, eps, H2, int(q_w is not None))
        cs = self._rope_table(pos, p, freq_factors)
        rd, wr = self._dummy, self._dummy_w
        bufs = [src.buf, w.buf if w is not None else rd, cs, *(a.buf if a is not None else rd for a in (v, pos, slots)),
                y.buf, *(a.buf if a is not None else wr for a in (ck, cv, cp)),
                q_src.buf if ql else rd, q_w.buf if q_w is not None else rd, q._buf if ql else self._dummy_ws[0]]
        if ql:
            q.pending = q.lazy = None
        self._run("norm_rope", u, bufs, grid(T * (H + H2)))
        if cp is not None:
            cp.host = None
        return y

    def rope(self, x: VkArray, pos: VkArray, p: RopeParams, freq_factors: VkArray | None = None) -> VkArray:
        """A pending per-head norm: one norm + rope dispatch, deferred so that the next rope + KV write
        (the same layer's K) can take it along."""
        if self._fusable_norm(x):
            y = self._new(x.shape)
            out = y._buf  # the closure must not hold y

            def record() -> None:
                self._norm_rope(x, pos, p, freq_factors, out=out)
            y.pending, y.lazy = record, ("norm_rope", x, pos, p, freq_factors)
            self._q_rope = weakref.ref(y)
            return y
        T, H, Dh = x.shape
        y = self._new(x.shape)
        u = self.dev.uniform("IIIII", T, H, Dh, p.n_dims, int(p.mode != "norm"))
        bufs = [x.buf, *self._rope_table(pos, p, freq_factors, split=True), y.buf]
        self._run("rope", u, bufs, grid(-(-x.size // 64)))
        return y

    def kv_write(self, cache_k, cache_v, cache_pos, k, v, pos, slots) -> None:
        T = k.shape[0]
        RK, RV = k.size // T, v.size // T
        u = self.dev.uniform("IIII", T, RK, RV, 0)
        bufs = [k.buf, v.buf, pos.buf, slots.buf, cache_k.buf, cache_v.buf, cache_pos.buf]
        self._run("kv_write", u, bufs, grid(-(-T * max(RK, RV) // 64)))
        cache_pos.host = None

    def rope_kv_write(self, k, v, pos, p, freq_factors, cache_k, cache_v, cache_pos, slots):
        if self._fusable_norm(k) and v.size % (k.shape[0] * k.shape[1]) == 0:
            return self._norm_rope(k, pos, p, freq_factors, (v, cache_k, cache_v, cache_pos, slots))
        T, H, Dh = k.shape
        y = self._new(k.shape)
        u = self.dev.uniform("IIIIII", T, H, Dh, p.n_dims, int(p.mode != "norm"), v.size // T)
        cs = self._rope_table(pos, p, freq_factors)
        bufs = [k.buf, cs, v.buf, pos.buf, slots.buf, y.buf, cache_k.buf, cache_v.buf, cache_pos.buf]
        self._run("rope_kv_write", u, bufs, grid(-(-T * max(H * Dh, v.size // T) // 64)))
        cache_pos.host = None
        return y

    def rope_qk_kv_write(self, q, k, v, pos, p, freq_factors, cache_k, cache_v, cache_pos, slots, q_norm=None,
                         k_norm=None, eps=0.0):
        """A layer's Q rope and K rope + KV write, each after its per-head norm when given; -> rotated Q.
        One token: deferred, done inside the attention dispatch over this cache (see attention()), or
        on its own (copied into the returned array) if something else reads the rotated Q first."""
        T, Hq, Dh = q.shape
        Hkv = cache_k.shape[1]
        Dv = v.size // max(1, T * Hkv)
        if not (T == 1 and k.shape == (1, Hkv, Dh) and v.size == Hkv * Dv and cache_v.shape[-1] == Dv
                and Hq % Hkv == 0 and Dh <= 256 and Dv <= 256 and p.mode in ("norm", "neox", "imrope")
                and q.dtype == k.dtype == v.dtype == "f32"):
            return self._qk_rope(q, k, v, pos, p, freq_factors, cache_k, cache_v, cache_pos, slots, q_norm, k_norm, eps)
        y = self._new(q.shape)
        out, nbytes = y._buf, y.nbytes  # not y itself: no reference cycle
        args = (q, k, v, pos, p, freq_factors, cache_k, cache_v, cache_pos, slots)

        def record() -> None:
            r = self._qk_rope(*args, q_norm, k_norm, eps)
            self.dev.copy(r.buf, 0, out, 0, nbytes)
        y.pending, y.lazy = record, ("qk_rope", args, q_norm, k_norm, eps)
        cache_pos.host = None
        return y

    def _qk_rope(self, q, k, v, pos, p, freq_factors, cache_k, cache_v, cache_pos, slots, q_norm, k_norm, eps):
        """rope_qk_kv_write as separate ops (the Q norm + rope joins the K one's dispatch: see rope())."""
        q = self.rope(self.rms_norm(q, q_norm, eps) if q_norm is not None else q, pos, p, freq_factors)
        k = self.rms_norm(k, k_norm, eps) if k_norm is not None else k
        self.rope_kv_write(k, v, pos, p, freq_factors, cache_k, cache_v, cache_pos, slots)
        return q

    def attention(self, q, k, v, q_pos, kv_pos, n_kv, kq_scale, window=0, softcap=0.0, sinks=None):
        """A one-token q of rope_qk_kv_write over its cache: that op runs in this dispatch (FUSE); one
        token splits the cache (attention.py; split_attention=False: one workgroup per query head)."""
        lz = q.lazy if q.pending is not None else None
        fuse = (lz is not None and lz[0] == "qk_rope" and lz[1][6] is k and lz[1][7] is v and lz[1][8] is kv_pos
                and lz[1][3] is q_pos)
        if fuse:
            q.pending = q.lazy = None
        return record_attention(self, q, k, v, q_pos, kv_pos, n_kv, kq_scale, window, softcap, sinks,
                                lz[1:] if fuse else None, self.split_attention)

    def _n_kv(self, n_kv: int, S: int, q_pos: VkArray) -> Any:
        """The step buffer holding the attention extent n_kv over a cache of S cells. A recorded step
        rewrites it on replay as min(S, position + 1): the extent `KVCache.begin` gives."""
        rec = self._recording
        if rec is None:
            return self.dev.step_words(n_kv)
        buf = self.dev.step_words(n_kv, S)
        b = self._rec_batch
        if q_pos is not b.pos or n_kv != min(S, int(b.pos_host[-1]) + 1):
            rec.refuse("attention extent is not the cache's min(cells, position + 1)")
        rec.input(buf, lambda bt, c: np.array([min(S, int(bt.pos_host[-1]) + 1), S], np.uint32))
        return buf

    # -- ops through the NumPy backend (no kernel yet) ------------------------------------------------------
    def _via_cpu(self, method: str, args: tuple, inplace: tuple[int, ...] = ()) -> Any:
        host = [self.to_numpy(a) if isinstance(a, VkArray) else a for a in args]
        out = getattr(self._cpu, method)(*host)
        for i in inplace:  # state arrays the op updated in place: swap in a buffer with the new data
            args[i].buf = self.dev.buffer_from(np.ascontiguousarray(host[i], np.float32), pooled=True)
            args[i].host = None
        if isinstance(out, tuple):
            return tuple(self.from_numpy(o) for o in out)
        return self.from_numpy(out)

    def conv1d_causal(self, x: VkArray, state: VkArray, w: VkArray) -> VkArray:
        T, C = x.shape
        K = w.shape[-1]
        y = self._new((T, C))
        self._run("conv1d_causal", self.dev.uniform("III", T, C, K), [x.buf, w.buf, state.buf, y.buf],
                  grid(-(-C // 64)))
        state.host = None
        return y

    def delta_net_recurrent(self, q: VkArray, k: VkArray, v: VkArray, g: VkArray, beta: VkArray,
                            state: VkArray) -> VkArray:
        T, Hv, S = v.shape
        if S > 256:
            return self._via_cpu("delta_net_recurrent", (q, k, v, g, beta, state), inplace=(5,))
        o = self._new((T, Hv, S))
        scale = float(np.float32(1.0) / np.sqrt(np.float32(S)))
        u = self.dev.uniform("IIIIf", T, q.shape[1], Hv, S, scale)
        self._run("delta_net", u, [q.buf, k.buf, v.buf, g.buf, beta.buf, state.buf, o.buf], (Hv, 1, 1))
        state.host = None
        return o

    def delta_net_chunked(self, q, k, v, g, beta, state, chunk=64):
        """The same function as the recurrence (token-serial inside one dispatch; a chunked kernel is next)."""
        return self.delta_net_recurrent(q, k, v, g, beta, state)

    def router_topk(self, logits: VkArray, k: int, gating: str, norm_w: bool,
                    w_scale: float) -> tuple[VkArray, VkArray]:
        if gating not in _GATING:
            raise ValueError(f"unknown expert gating {gating!r}")
        if k > 64:
            return self._via_cpu("router_topk", (logits, k, gating, norm_w, w_scale))
        E = logits.shape[-1]
        T = logits.size // E
        ids, w = self._new((T, k), "i32"), self._new((T, k))
        scale = float(w_scale) if w_scale and w_scale != 1.0 else 1.0
        u = self.dev.uniform("IIIIIf", T, E, k, _GATING[gating], int(bool(norm_w)), scale)
        self._run("router_topk", u, [logits.buf, ids.buf, w.buf], grid(-(-T // 64)))
        return ids, w

    def weighted_sum(self, x: VkArray, w: VkArray) -> VkArray:
        T, k, D = x.shape
        y = self._new((T, D))
        self._run("weighted_sum", self.dev.uniform("III", T, k, D), [x.buf, w.buf, y.buf], grid(-(-T * D // 64)))
        return y

    # -- sampling -------------------------------------------------------------------------------------------
    def argmax(self, x: VkArray) -> VkArray:
        N = x.shape[-1]
        rows = x.size // N
        y = self._new(x.shape[:-1], "i32")
        self._run("argmax", self.dev.uniform("II", N, rows), [x.buf, y.buf], grid(rows))
        return y

    @property
    def stats(self) -> dict[str, Any]:
        """Dispatches and submits so far, and the adapter in use."""
        return {"dispatches": self.dev.n_dispatches, "submits": self.dev.n_submits,
                "adapter": self.dev.info.get("device"), "adapter_type": self.dev.info.get("adapter_type")}



def _bstrides(shape: tuple[int, ...], out4: tuple[int, ...]) -> list[int]:
    """Element strides of a row-major array broadcast to the 4-D shape `out4` (0 on broadcast dims)."""
    full = (1,) * (4 - len(shape)) + tuple(shape)
    strides, acc = [0] * 4, 1
    for d in range(3, -1, -1):
        strides[d] = acc if full[d] == out4[d] and full[d] != 1 else 0
        acc *= full[d]
    return strides

