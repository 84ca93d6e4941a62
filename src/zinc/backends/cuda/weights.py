"""Weights on the CUDA backend: raw GGUF blocks uploaded once and repacked into per-field arrays.

`CudaWeight.parts` holds the arrays `kernels.quant` reads (layouts in that module's docstring);
float weights (F32, F16, BF16) are kept as one dense tensor in their own dtype. The repacking is
plain torch slicing of the (n_blocks, block_bytes) byte view on the device, done once at upload.
"""

from __future__ import annotations

import warnings

import numpy as np
import torch

from zinc.backends.base import QTensor
from zinc.gguf.constants import GGMLType
from zinc.gguf.quants import KVALUES_FP4, KVALUES_IQ4NL

QUANT_TYPES = frozenset({GGMLType.Q4_K, GGMLType.Q5_K, GGMLType.Q6_K, GGMLType.Q8_0, GGMLType.Q4_0,
                         GGMLType.Q4_1, GGMLType.Q5_0, GGMLType.Q5_1, GGMLType.IQ4_NL, GGMLType.MXFP4})
FLOAT_TYPES = {GGMLType.F32: torch.float32, GGMLType.F16: torch.float16, GGMLType.BF16: torch.bfloat16}
SUPPORTED = QUANT_TYPES | frozenset(FLOAT_TYPES)


class CudaWeight:
    """A weight of row-major shape (..., K) on the device; `rows` = product of the leading dims."""

    def __init__(self, qt: QTensor, device: torch.device) -> None:
        self.name, self.ggml_type, self.shape = qt.name, GGMLType(qt.ggml_type), tuple(qt.shape)
        self.k = int(self.shape[-1])
        self.rows = int(np.prod(self.shape[:-1], dtype=np.int64)) if len(self.shape) > 1 else 1
        self.nbytes = qt.nbytes
        with warnings.catch_warnings():  # a read-only mmap view: torch only reads it, to copy it over
            warnings.simplefilter("ignore", UserWarning)
            raw = torch.from_numpy(np.ascontiguousarray(qt.data)).to(device)
        if self.ggml_type in FLOAT_TYPES:
            self.dense = raw.view(FLOAT_TYPES[self.ggml_type]).view(self.rows, self.k)
            self.parts: tuple[torch.Tensor, ...] = ()
        else:
            self.dense = None
            self.parts = _repack(raw, self.ggml_type, self.rows, self.k)

    @property
    def quantized(self) -> bool:
        return self.dense is None


def _repack(raw: torch.Tensor, t: GGMLType, n: int, k: int) -> tuple[torch.Tensor, ...]:
    if t == GGMLType.Q8_0:
        b = raw.view(n, k // 32, 34)
        d = b[:, :, 0:2].contiguous().view(torch.float16).view(n, k // 32)
        qs = b[:, :, 2:34].contiguous().view(torch.int8).view(n, k)
        return qs, d
    if t == GGMLType.Q4_K:
        b = raw.view(n, k // 256, 144)
        dm = b[:, :, 0:4].contiguous().view(torch.float16).view(n, 2 * (k // 256))
        sc, mn = _scale_min_k4(b[:, :, 4:16])
        qs = b[:, :, 16:144].contiguous().view(n, k // 2)
        sm4 = torch.cat([sc.view(n, k // 64, 2), mn.view(n, k // 64, 2)], dim=-1).contiguous()
        return qs, sc.view(n, k // 32), mn.view(n, k // 32), dm, sm4.view(torch.int32).view(n, k // 64)
    if t == GGMLType.Q6_K:
        b = raw.view(n, k // 256, 210)
        ql = b[:, :, 0:128].contiguous().view(n, k // 2)
        qh = b[:, :, 128:192].contiguous().view(n, k // 4)
        sc = b[:, :, 192:208].contiguous().view(torch.int8).view(n, k // 16)
        d = b[:, :, 208:210].contiguous().view(torch.float16).view(n, k // 256)
        # sc4: the scales of unit (128-value half h, column e) of `kernels.mmvs` in one word: sc[8h + e + 2j], j < 4
        sc4 = sc.view(n, k // 256, 2, 4, 2).permute(0, 1, 2, 4, 3).contiguous().view(torch.int32).view(n, k // 64)
        return ql, qh, sc, d, sc4
    if t == GGMLType.Q5_K:
        b = raw.view(n, k // 256, 176)
        dm = b[:, :, 0:4].contiguous().view(torch.float16).view(n, 2 * (k // 256))
        sc, mn = _scale_min_k4(b[:, :, 4:16])
        qh = b[:, :, 16:48].contiguous().view(n, k // 8)
        qs = b[:, :, 48:176].contiguous().view(n, k // 2)
        return qs, qh, torch.cat([sc, mn], dim=-1).contiguous().view(n, k // 16), dm
    if t in _BLOCK32:
        return _repack_b32(raw, t, n, k)
    raise ValueError(f"no CUDA repacking for {t.name}")


# 32-value block types: block bytes and the offsets of the nibbles and of the fields after them
_BLOCK32 = {GGMLType.Q4_0: 18, GGMLType.Q4_1: 20, GGMLType.Q5_0: 22, GGMLType.Q5_1: 24,
            GGMLType.IQ4_NL: 18, GGMLType.MXFP4: 17}


def _repack_b32(raw: torch.Tensor, t: GGMLType, n: int, k: int) -> tuple[torch.Tensor, ...]:
    """Nibbles (N, K/2) u8 first, then the per-block fields (layouts in kernels/quant.py)."""
    b = raw.view(n, k // 32, _BLOCK32[t])

    def f16(off: int) -> torch.Tensor:
        return b[:, :, off:off + 2].contiguous().view(torch.float16).view(n, k // 32)

    def qs(off: int) -> torch.Tensor:
        return b[:, :, off:off + 16].contiguous().view(n, k // 2)

    def qh() -> torch.Tensor:
        off = 2 if t == GGMLType.Q5_0 else 4
        return b[:, :, off:off + 4].contiguous().view(torch.int32).view(n, k // 32)

    if t == GGMLType.Q4_0:
        return qs(2), f16(0)
    if t == GGMLType.Q4_1:
        return qs(4), f16(0), f16(2)
    if t == GGMLType.Q5_0:
        return qs(6), qh(), f16(0)
    if t == GGMLType.Q5_1:
        return qs(8), qh(), f16(0), f16(2)
    table = KVALUES_IQ4NL if t == GGMLType.IQ4_NL else KVALUES_FP4
    tab = torch.from_numpy(table.astype(np.float32)).to(raw.device)
    if t == GGMLType.IQ4_NL:
        return qs(2), f16(0), tab
    return qs(1), b[:, :, 0].contiguous(), tab


def _scale_min_k4(s: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The 12-byte Q4_K scales field (..., 12) -> six-bit scales and mins (..., 8) u8 each."""
    a, b, c = s[..., 0:4], s[..., 4:8], s[..., 8:12]
    sc = torch.cat([a & 63, (c & 15) | ((a >> 6) << 4)], dim=-1).contiguous()
    mn = torch.cat([b & 63, (c >> 4) | ((b >> 6) << 4)], dim=-1).contiguous()
    return sc, mn
