"""Weights on the wgpu device: the repacking at upload and the WGSL dequantizer of each ggml type.

WGSL has no 8- or 16-bit storage, so every block is made u32-aligned at upload: F32 as is; F16 and
BF16 as pairs per word (rows padded to an even length); Q4_K (144 bytes) and Q5_K (176 bytes) as
is; Q8_0, Q4_0, Q5_0 with 2 zero bytes after the f16 scale (9, 5, 6 words a block); MXFP4 with 3
zero bytes after the exponent byte (5 words); Q6_K split by field across the row (all ql, all qh, all
scales, all d's; row padded to 16 bytes), so the decode matvec reads aligned 16-byte words. One WGSL dequantizer per type (`shaders/dequant_<type>.wgsl`) yields 32-element
chunks of a row and is spliced into the matmul, matmul-experts and embed kernels.
"""

from __future__ import annotations

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
# per ggml type with decode matvec kernels (shaders/mv_<name>.wgsl on f32 activations: its 16-byte
# units per row of K; shaders/mvq_<name>.wgsl on 8-bit activations: K / 64 units of 64 elements)
MATVEC = {GGMLType.Q4_K: ("q4_k", lambda K: K // 256 * 8), GGMLType.Q6_K: ("q6_k", lambda K: K // 256 * 4)}


class VkWeight:
    """A weight on the device: repacked words, ggml type, row-major shape and words per row."""

    def __init__(self, qt: QTensor, buf: Any, row_words: int) -> None:
        self.qt, self.buf, self.row_words = qt, buf, row_words
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
    if t == GGMLType.Q6_K:
        b = rows.reshape(rows.shape[0], -1, 210)
        rows = np.concatenate([b[..., :128].reshape(len(b), -1), b[..., 128:192].reshape(len(b), -1),
                               b[..., 192:208].reshape(len(b), -1), b[..., 208:].reshape(len(b), -1),
                               np.zeros((len(b), -rows.shape[1] % 16), np.uint8)], axis=1)
    return rows, rows.shape[1] // 4


def matvec_src(w: VkWeight, suffix: str = "") -> str | None:
    """The WGSL matvec unit of `w`'s type (helpers, then mv_word and mv_dot; with a suffix only those
    two, renamed, on buffer W<suffix>), or None when the type has no matvec kernel."""
    if w.ggml_type not in MATVEC:
        return None
    src = shader_source(f"mv_{MATVEC[w.ggml_type][0]}.wgsl")
    if suffix:
        src = (src.split("// -- dot", 1)[1].replace("W[", f"W{suffix}[").replace("mv_dot(", f"mv_dot{suffix}(")
               .replace("mv_word(", f"mv_word{suffix}("))
    return src


def mvq_src(w: VkWeight, suffix: str = "") -> str:
    """The unit of `w`'s type for the 8-bit-activation matvec (shaders/mvq_<type>.wgsl: helpers, then
    mvq_w); with a suffix only mvq_w, renamed, on buffer W<suffix>."""
    src = shader_source(f"mvq_{MATVEC[w.ggml_type][0]}.wgsl")
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
