"""The Vulkan/Metal backend: the `Ops` interface on wgpu compute shaders (WGSL in `shaders/`).

Activations are `VkArray`s: a float32 (or int32) storage buffer plus its row-major shape; every op
allocates its output and records one dispatch into the device's pending command encoder, so a model
step is one command buffer that is submitted when the host reads a result (`to_numpy`).

Weights are repacked at upload into u32-aligned layouts (WGSL has no 8- or 16-bit storage):
F32 as is, F16 as pairs per word (rows padded to even length), Q8_0 as 9 words a block (d, 2 zero
bytes, 32 codes), Q4_K as is (144 bytes = 36 words), Q6_K with 2 zero bytes after each 210-byte
block (53 words). One WGSL dequantizer per type (`dequant_<type>.wgsl`) yields 32-element chunks
and is spliced into the matmul and embed kernels.

RoPE angles are built on the host by the NumPy backend's `rope_cache` (the positions' host copy
travels with the array made by `from_numpy`), so the tables equal the reference bit for bit.
Ops without a kernel yet (conv1d, the delta rule, router top-k, weighted sum) run through the
NumPy backend on a host copy; `matmul_experts` is not offered and the capability check says so.
KV caches asked for as f16 are stored as f32.
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from zinc.backends.base import BaseOps, QTensor, RopeParams
from zinc.backends.cpu.ops import CpuOps, rope_cache
from zinc.backends.vulkan.device import SHADER_DIR, Device, grid
from zinc.gguf.constants import GGMLType

_NP = {"f32": np.float32, "f16": np.float32, "i32": np.int32}
_DEQUANT = {GGMLType.F32: "f32", GGMLType.F16: "f16", GGMLType.Q8_0: "q8_0",
            GGMLType.Q4_K: "q4_k", GGMLType.Q6_K: "q6_k"}
_BINARY = {"add": "a + b", "mul": "a * b"}
_UNARY = {"scale": "x * s", "softcap": "tanh(x * (1.0 / s)) * s", "sigmoid": "1.0 / (1.0 + exp(-x))",
          "silu": "x / (1.0 + exp(-x))", "softplus": "select(log(1.0 + exp(x)), x, x > 20.0)",
          "gelu": "gelu(x)", "gelu_table": "gelu_table(x)"}
_GLU = {"silu": "g / (1.0 + exp(-g)) * u", "gelu": "gelu(g) * u", "gelu_table": "gelu_table(g) * u",
        "swiglu_oai": "swiglu_oai(g, u)"}


class VkArray:
    """A device array: buffer, row-major shape, dtype ("f32" or "i32"), optional host copy of the data."""

    def __init__(self, buf: Any, shape: tuple[int, ...], dtype: str = "f32", host: np.ndarray | None = None):
        self.buf, self.shape, self.dtype, self.host = buf, tuple(int(s) for s in shape), dtype, host

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def nbytes(self) -> int:
        return 4 * self.size


class VkWeight:
    """A weight on the device: repacked words, ggml type, row-major shape and words per row."""

    def __init__(self, qt: QTensor, buf: Any, row_words: int) -> None:
        self.qt, self.buf, self.row_words = qt, buf, row_words
        self.shape, self.ggml_type = qt.shape, qt.ggml_type


def repack(qt: QTensor) -> tuple[np.ndarray, int]:
    """(u32-aligned bytes, words per row) of a weight for the WGSL dequantizers."""
    K, rows = qt.shape[-1], qt.rows()
    t = qt.ggml_type
    if t == GGMLType.F32:
        return rows, K
    if t == GGMLType.F16:
        if K % 2:
            rows = np.concatenate([rows, np.zeros((rows.shape[0], 2), np.uint8)], axis=1)
        return rows, rows.shape[1] // 4
    if t == GGMLType.Q4_K:
        return rows, rows.shape[1] // 4
    if t in (GGMLType.Q8_0, GGMLType.Q6_K):
        bsz = 34 if t == GGMLType.Q8_0 else 210
        blocks = rows.reshape(rows.shape[0], -1, bsz)
        pad = np.zeros((*blocks.shape[:2], 2), np.uint8)
        if t == GGMLType.Q8_0:  # d, 2 zero bytes, 32 codes
            out = np.concatenate([blocks[..., :2], pad, blocks[..., 2:]], axis=2)
        else:
            out = np.concatenate([blocks, pad], axis=2)
        out = out.reshape(rows.shape[0], -1)
        return out, out.shape[1] // 4
    raise ValueError(f"no WGSL dequantizer for {t.name}")


class VulkanOps(BaseOps):
    """The wgpu implementation of `zinc.backends.base.Ops`."""

    name = "vulkan"

    def __init__(self, allow_cpu_adapter: bool = False, gelu: str = "table") -> None:
        if gelu not in ("table", "exact"):
            raise ValueError(f"gelu must be 'table' or 'exact', got {gelu!r}")
        self.dev = Device(allow_cpu_adapter=allow_cpu_adapter)
        self.gelu_mode = gelu
        self._cpu = CpuOps(gelu=gelu)
        self._dummy = self.dev.buffer(16)

    # -- memory --------------------------------------------------------------------------------------
    def upload(self, qt: QTensor) -> VkWeight:
        data, row_words = repack(qt)
        return VkWeight(qt, self.dev.buffer_from(np.ascontiguousarray(data)), row_words)

    def from_numpy(self, a: np.ndarray) -> VkArray:
        a = np.asarray(a)
        dtype = "i32" if np.issubdtype(a.dtype, np.integer) else "f32"
        a = np.ascontiguousarray(a, _NP[dtype])
        return VkArray(self.dev.buffer_from(a), a.shape, dtype, host=a if a.size <= 65536 else None)

    def to_numpy(self, x: VkArray) -> np.ndarray:
        if x.host is not None:
            return x.host.copy()
        raw = self.dev.read(x.buf, x.nbytes)
        return np.frombuffer(raw, _NP[x.dtype]).reshape(x.shape).copy()

    def zeros(self, shape: tuple[int, ...], dtype: str) -> VkArray:
        return self.full(shape, 0, dtype)

    def full(self, shape: tuple[int, ...], value: float, dtype: str) -> VkArray:
        a = np.full(shape, value, _NP[dtype])
        return VkArray(self.dev.buffer_from(a), a.shape, "i32" if dtype == "i32" else "f32")

    def capabilities(self) -> dict[str, frozenset[GGMLType]]:
        types = frozenset(_DEQUANT)
        return {"embed": types, "matmul": types, "matmul_experts": frozenset()}

    def _new(self, shape: tuple[int, ...], dtype: str = "f32") -> VkArray:
        return VkArray(self.dev.buffer(4 * int(np.prod(shape, dtype=np.int64))), shape, dtype)

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
        return VkArray(x.buf, shape, x.dtype, host)

    def split(self, x: VkArray, sizes: Iterable[int]) -> list[VkArray]:
        sizes = [int(s) for s in sizes]
        C = x.shape[-1]
        R = x.size // C
        out, c0 = [], 0
        for s in sizes:
            y = self._new((*x.shape[:-1], s), x.dtype)
            u = self.dev.uniform("IIII", R, s, C, c0)
            self._run("copy_cols", u, [x.buf, y.buf], grid(-(-R * s // 64)))
            out.append(y)
            c0 += s
        return out

    def slice_rows(self, x: VkArray, start: int, stop: int) -> VkArray:
        row = x.size // x.shape[0]
        y = self._new((stop - start, *x.shape[1:]), x.dtype)
        self.dev.copy(x.buf, 4 * start * row, y.buf, 0, y.nbytes)
        return y

    # -- weight ops ----------------------------------------------------------------------------------------
    def _dequant_src(self, w: VkWeight) -> str:
        return (SHADER_DIR / f"dequant_{_DEQUANT[w.ggml_type]}.wgsl").read_text()

    def embed(self, w: VkWeight, ids: VkArray) -> VkArray:
        K = w.shape[-1]
        T = ids.size
        nchunk = -(-K // 32)
        y = self._new((*ids.shape, K))
        u = self.dev.uniform("IIIIII", w.shape[0], K, T, w.row_words, nchunk, 0)
        self._run("embed", u, [ids.buf, w.buf, y.buf], grid(-(-T * nchunk // 64)),
                  {"DEQUANT": self._dequant_src(w)})
        return y

    def matmul(self, x: VkArray, w: VkWeight) -> VkArray:
        N, K = w.shape[0], w.shape[-1]
        if len(w.shape) != 2 or x.shape[-1] != K:
            raise ValueError(f"matmul: x {x.shape} does not match weight {w.qt.name} {w.shape}")
        T = x.size // K
        nchunk, n_tiles = -(-K // 32), -(-T // 4)
        y = self._new((*x.shape[:-1], N))
        u = self.dev.uniform("IIIIII", N, K, T, w.row_words, nchunk, n_tiles)
        self._run("matmul", u, [x.buf, w.buf, y.buf], grid(N * n_tiles), {"DEQUANT": self._dequant_src(w)})
        return y

    def matmul_experts(self, x, w, ids):
        raise NotImplementedError("vulkan: matmul_experts has no kernel yet (see capabilities())")

    # -- elementwise, norms ----------------------------------------------------------------------------------
    def _binary(self, a: VkArray, b: VkArray, op: str) -> VkArray:
        shape = np.broadcast_shapes(a.shape, b.shape)
        if len(shape) > 4:
            raise ValueError(f"vulkan {op}: more than 4 dims {shape}")
        y = self._new(shape)
        sh = (1,) * (4 - len(shape)) + tuple(shape)
        strides = [_bstrides(s, sh) for s in (a.shape, b.shape)]
        u = self.dev.uniform("4I4I4II", *sh, *strides[0], *strides[1], y.size)
        self._run("binary", u, [a.buf, b.buf, y.buf], grid(-(-y.size // 64)), {"EXPR": _BINARY[op]})
        return y

    def add(self, a: VkArray, b: VkArray) -> VkArray:
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
        u = self.dev.uniform("IIIf", D, rows, int(w is not None), eps)
        self._run("rms_norm", u, [x.buf, (w.buf if w is not None else self._dummy), y.buf], grid(rows))
        return y

    def glu(self, gate: VkArray, up: VkArray, act: str) -> VkArray:
        if act not in _GLU or act == "gelu_table":
            raise ValueError(f"unknown GLU activation {act!r}")
        if gate.shape != up.shape:
            return super().glu(gate, up, act)
        key = "gelu_table" if act == "gelu" and self.gelu_mode == "table" else act
        y = self._new(gate.shape)
        self._run("glu", self.dev.uniform("I", y.size), [gate.buf, up.buf, y.buf], grid(-(-y.size // 64)),
                  {"EXPR": _GLU[key]})
        return y

    # -- attention ---------------------------------------------------------------------------------------
    def _host(self, a: VkArray) -> np.ndarray:
        return a.host if a.host is not None else self.to_numpy(a)

    def rope(self, x: VkArray, pos: VkArray, p: RopeParams, freq_factors: VkArray | None = None) -> VkArray:
        if p.mode not in ("norm", "neox", "imrope"):
            raise ValueError(f"unknown rope mode {p.mode!r}")
        ff = self._host(freq_factors) if freq_factors is not None else None
        cos, sin = rope_cache(self._host(pos), p, ff)
        T, H, Dh = x.shape
        y = self._new(x.shape)
        u = self.dev.uniform("IIIII", T, H, Dh, p.n_dims, int(p.mode != "norm"))
        bufs = [x.buf, self.dev.buffer_from(cos), self.dev.buffer_from(sin), y.buf]
        self._run("rope", u, bufs, grid(-(-x.size // 64)))
        return y

    def kv_write(self, cache_k, cache_v, cache_pos, k, v, pos, slots) -> None:
        T = k.shape[0]
        RK, RV = k.size // T, v.size // T
        u = self.dev.uniform("IIII", T, RK, RV, 0)
        bufs = [k.buf, v.buf, pos.buf, slots.buf, cache_k.buf, cache_v.buf, cache_pos.buf]
        self._run("kv_write", u, bufs, grid(-(-T * max(RK, RV) // 64)))
        cache_pos.host = None

    def attention(self, q, k, v, q_pos, kv_pos, n_kv, kq_scale, window=0, softcap=0.0, sinks=None):
        T, Hq, Dh = q.shape
        Hkv, Dv = k.shape[1], v.shape[2]
        if Dh > 256 or Dv > 256:
            raise ValueError(f"vulkan attention: head dims {Dh}/{Dv} exceed 256")
        o = self._new((T, Hq, Dv))
        u = self.dev.uniform("IIIIIIIIff", T, Hq, Hkv, Dh, Dv, int(n_kv), int(window), int(sinks is not None),
                             float(kq_scale), float(softcap))
        bufs = [q.buf, k.buf, v.buf, q_pos.buf, kv_pos.buf, sinks.buf if sinks is not None else self._dummy, o.buf]
        self._run("attention", u, bufs, grid(T * Hq))
        return o

    # -- ops through the NumPy backend (no kernel yet) ------------------------------------------------------
    def _via_cpu(self, method: str, args: tuple, inplace: tuple[int, ...] = ()) -> Any:
        host = [self.to_numpy(a) if isinstance(a, VkArray) else a for a in args]
        out = getattr(self._cpu, method)(*host)
        for i in inplace:  # state arrays the op updated in place: swap in a buffer with the new data
            args[i].buf = self.dev.buffer_from(np.ascontiguousarray(host[i], np.float32))
            args[i].host = None
        if isinstance(out, tuple):
            return tuple(self.from_numpy(o) for o in out)
        return self.from_numpy(out)

    def conv1d_causal(self, x, state, w):
        return self._via_cpu("conv1d_causal", (x, state, w), inplace=(1,))

    def delta_net_recurrent(self, q, k, v, g, beta, state):
        return self._via_cpu("delta_net_recurrent", (q, k, v, g, beta, state), inplace=(5,))

    def delta_net_chunked(self, q, k, v, g, beta, state, chunk=64):
        return self._via_cpu("delta_net_chunked", (q, k, v, g, beta, state, chunk), inplace=(5,))

    def router_topk(self, logits, k, gating, norm_w, w_scale):
        return self._via_cpu("router_topk", (logits, k, gating, norm_w, w_scale))

    def weighted_sum(self, x, w):
        return self._via_cpu("weighted_sum", (x, w))

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

