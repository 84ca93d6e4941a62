"""Weights on the wgpu device: the repacking at upload and the WGSL dequantizer of each ggml type.

WGSL has no 8- or 16-bit storage, so every block is made u32-aligned at upload: F32 as is; F16 and
BF16 as pairs per word (rows padded to an even length); Q5_K (176 bytes) as is; Q8_0, Q4_0, Q5_0 with
2 zero bytes after the f16 scale (9, 5, 6 words a block); MXFP4 with 3 zero bytes after the exponent
byte (5 words). Q4_K and Q6_K rows are rearranged for the decode matvecs into 64-element chunks u
(U = K / 64 a row), field by field, so that lanes reading consecutive chunks read consecutive 16-byte
words of each field:
* Q4_K: A[u], B[u] (U vec4 each): the chunk's 32 qs bytes (its sub-blocks 2j, 2j + 1 of block u / 4,
  j = u % 4), A the first 16 bytes, B the last 16: the low nibble of byte i is element 16 p + i of the
  chunk, the high nibble element 32 + 16 p + i (p = 0 for A, 1 for B); then the block headers (d|dmin,
  scales[12]: one vec4 per block). 144 bytes per 256 values, as in the file.
* Q6_K: A[u], B[u] (the low 4 bits of elements 16 p + i and 32 + 16 p + i, as Q4_K), H[u] (byte i:
  the high 2 bits of elements i, 16 + i, 32 + i, 48 + i at bits 0, 2, 4, 6), then the int8 scale of
  each 16 elements (one word per chunk), then the f16 d's (two a word), padded to 16 bytes.
One WGSL dequantizer per type (`shaders/dequant_<type>.wgsl`) yields 32-element chunks of a row and
is spliced into the matmul, matmul-experts and embed kernels.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any

import numpy as np

from zinc.backends.base import QTensor
from zinc.backends.vulkan.device import shader_source
from zinc.gguf.constants import GGMLType

DEQUANT = {GGMLType.F32: "f32", GGMLType.F16: "f16", GGMLType.BF16: "bf16", GGMLType.Q8_0: "q8_0",
           GGMLType.Q4_0: "q4_0", GGMLType.Q5_0: "q5_0", GGMLType.Q4_K: "q4_k", GGMLType.Q5_K: "q5_k",
           GGMLType.Q6_K: "q6_k", GGMLType.MXFP4: "mxfp4"}
# block bytes, where zero padding goes inside the block, how many zero bytes
_PAD = {GGMLType.Q8_0: (34, 2, 2), GGMLType.Q4_0: (18, 2, 2), GGMLType.Q5_0: (22, 2, 2),
        GGMLType.MXFP4: (17, 1, 3)}
# ggml types with decode matvec kernels: shaders/mv_<name>.wgsl (f32 activations) and mvq_<name>.wgsl
# (8-bit activations), both over the row's K / 64 chunks
MATVEC = {GGMLType.Q4_K: "q4_k", GGMLType.Q6_K: "q6_k"}


class VkWeight:
    """A weight on the device: repacked words, ggml type, row-major shape and words per row.

    A 2-D weight larger than one storage binding may hold is uploaded as `parts`: (first row, VkWeight of
    the following rows) each under the limit, and `buf` is None; the matmul and embed ops run per part."""

    def __init__(self, qt: QTensor, buf: Any, row_words: int, parts: list[tuple[int, "VkWeight"]] | None = None) -> None:
        self.qt, self.buf, self.row_words, self.parts = qt, buf, row_words, parts
        self.shape, self.ggml_type = qt.shape, qt.ggml_type


def repack(qt: QTensor) -> tuple[np.ndarray, int]:
    """(u32-aligned bytes (n_rows, row bytes), words per row) of a weight for the WGSL dequantizers."""
    rows, t = qt.rows(), qt.ggml_type
    if t not in DEQUANT:
        raise ValueError(f"no WGSL dequantizer for {t.name}")
    if t in (GGMLType.F16, GGMLType.BF16) and qt.shape[-1] % 2:
        rows = np.concatenate([rows, np.zeros((rows.shape[0], 2), np.uint8)], axis=1)
    if t in _PAD:
        bsz, at, n = _PAD[t]
        blocks = rows.reshape(rows.shape[0], -1, bsz)
        pad = np.zeros((*blocks.shape[:2], n), np.uint8)
        rows = np.concatenate([blocks[..., :at], pad, blocks[..., at:]], axis=2).reshape(rows.shape[0], -1)
    if t in (GGMLType.Q4_K, GGMLType.Q6_K):
        rows = _by_rows(_chunked_q4_k if t == GGMLType.Q4_K else _chunked_q6_k, rows)
    return rows, rows.shape[1] // 4


def _by_rows(fn: Any, rows: np.ndarray, batch_bytes: int = 8 << 20) -> np.ndarray:
    """fn over batches of rows on a thread pool (NumPy releases the GIL), into one array."""
    step = max(1, batch_bytes // max(1, rows.shape[1]))
    parts = [slice(i, i + step) for i in range(0, len(rows), step)]
    if len(parts) == 1:
        return fn(rows)
    first = fn(rows[parts[0]])
    out = np.empty((len(rows), first.shape[1]), first.dtype)
    out[parts[0]] = first

    def run(s: slice) -> None:
        out[s] = fn(rows[s])
    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as ex:
        list(ex.map(run, parts[1:]))
    return out


def _chunked_q4_k(rows: np.ndarray) -> np.ndarray:
    """Q4_K rows (n, 144 nb) as A | B | headers (see the module docstring); moved as 8-byte words."""
    n = len(rows)
    v = np.ascontiguousarray(rows).view(np.uint64).reshape(n, -1, 18)  # a block: header 2 words, qs 16
    U = 4 * v.shape[1]
    out = np.empty((n, 18 * v.shape[1]), np.uint64)
    out[:, :4 * U].reshape(n, 2, -1, 4, 2)[...] = v[:, :, 2:].reshape(n, -1, 4, 2, 2).transpose(0, 3, 1, 2, 4)
    out[:, 4 * U:].reshape(n, -1, 2)[...] = v[:, :, :2]
    return out.view(np.uint8)


def _chunked_q6_k(rows: np.ndarray) -> np.ndarray:
    """Q6_K rows (n, 210 nb) as A | B | H | scales | d's (see the module docstring), in 8-byte words:
    half h of a block is chunks 2h (elements 128h + 32q + l of quarters q = 0, 1) and 2h + 1 (q = 2, 3)."""
    n = len(rows)
    b = rows.reshape(n, -1, 210)
    nb = b.shape[1]
    # (16-byte quarter i of ql[64h:64h+64] / half i of qh[32h:32h+32], row, block, h, word)
    ql = np.ascontiguousarray(b[..., :128]).view(np.uint64).reshape(n, nb, 2, 4, 2).transpose(3, 0, 1, 2, 4).copy()
    qh = np.ascontiguousarray(b[..., 128:192]).view(np.uint64).reshape(n, nb, 2, 2, 2).transpose(3, 0, 1, 2, 4).copy()
    m = [np.uint64(int(f"{v:02x}" * 8, 16)) for v in (0x0F, 0xF0, 0x03, 0x0C, 0x30, 0xC0)]
    two, four = np.uint64(2), np.uint64(4)
    f = np.empty((n, nb, 2, 3, 2, 2), np.uint64)  # (row, block, h, A/B/H, chunk 2h or 2h + 1, word)
    for i, (lo, hi) in enumerate(((ql[0], ql[2]), (ql[1], ql[3]))):
        f[:, :, :, i, 0] = (lo & m[0]) | ((hi << four) & m[1])
        f[:, :, :, i, 1] = ((lo >> four) & m[0]) | (hi & m[1])
    q0, q1 = qh
    f[:, :, :, 2, 0] = (q0 & m[2]) | ((q1 & m[2]) << two) | ((q0 & m[3]) << two) | ((q1 & m[3]) << four)
    f[:, :, :, 2, 1] = ((q0 >> four) & m[2]) | ((q1 >> two) & m[3]) | ((q0 >> two) & m[4]) | (q1 & m[5])
    fields = np.ascontiguousarray(f.transpose(0, 3, 1, 2, 4, 5)).view(np.uint8).reshape(n, -1)
    pad = np.zeros((n, -210 * nb % 16), np.uint8)
    return np.concatenate([fields, b[..., 192:208].reshape(n, -1), b[..., 208:].reshape(n, -1), pad], axis=1)


def matvec_src(w: VkWeight, suffix: str = "") -> str | None:
    """The WGSL matvec unit of `w`'s type (helpers, then mv_dot; with a suffix only mv_dot, renamed, on
    buffer W<suffix>), or None when the type has no matvec kernel."""
    if w.ggml_type not in MATVEC:
        return None
    src = shader_source(f"mv_{MATVEC[w.ggml_type]}.wgsl")
    if suffix:
        src = src.split("// -- dot", 1)[1].replace("W[", f"W{suffix}[").replace("mv_dot(", f"mv_dot{suffix}(")
    return src


def mvq_src(w: VkWeight, suffix: str = "") -> str:
    """The unit of `w`'s type for the 8-bit-activation matvec (shaders/mvq_<type>.wgsl: helpers, then
    mvq_w); with a suffix only mvq_w, renamed, on buffer W<suffix>."""
    src = shader_source(f"mvq_{MATVEC[w.ggml_type]}.wgsl")
    if suffix:
        src = src.split("// -- w", 1)[1].replace("W[", f"W{suffix}[").replace("mvq_w(", f"mvq_w{suffix}(")
    return src


def dequant_src(w: VkWeight, suffix: str = "") -> str:
    """The WGSL dequantizer of `w`'s type; a suffix renames its buffer, row stride and functions."""
    return _dequant_src(DEQUANT[w.ggml_type], suffix)


@lru_cache(maxsize=None)
def _dequant_src(name: str, suffix: str) -> str:
    src = shader_source(f"dequant_{name}.wgsl")
    if suffix:
        src = (src.replace("W[", f"W{suffix}[").replace("P.row_words", f"P.row_words{suffix}")
               .replace("fn chunk(", f"fn chunk{suffix}(").replace("wbyte(", f"wbyte{suffix}(")
               .replace("kscale_min(", f"kscale_min{suffix}(")
               .replace("FP4", f"FP4{suffix}"))
    return src
