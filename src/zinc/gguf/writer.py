"""GGUF v3 writer for tests and synthetic models.

Tensors are written one at a time (their data may be a zero-argument callable evaluated during
``write()``), so a multi-GB model never has to sit in memory. The file is written under a temporary
name and renamed into place at the end, so an interrupted write never leaves a half file at ``path``.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Any, Callable, Union

import numpy as np

from zinc.errors import GGUFError
from zinc.gguf.constants import (
    BLOCK_LAYOUT,
    GGUF_DEFAULT_ALIGNMENT,
    GGUF_MAGIC,
    SCALAR_DTYPES,
    GGMLType,
    GGUFValueType,
    ggml_type,
)

TensorData = Union[bytes, bytearray, memoryview, np.ndarray]
_NP_TO_VT = {
    np.dtype(np.uint8): GGUFValueType.UINT8, np.dtype(np.int8): GGUFValueType.INT8,
    np.dtype(np.uint16): GGUFValueType.UINT16, np.dtype(np.int16): GGUFValueType.INT16,
    np.dtype(np.uint32): GGUFValueType.UINT32, np.dtype(np.int32): GGUFValueType.INT32,
    np.dtype(np.float32): GGUFValueType.FLOAT32, np.dtype(np.bool_): GGUFValueType.BOOL,
    np.dtype(np.uint64): GGUFValueType.UINT64, np.dtype(np.int64): GGUFValueType.INT64,
    np.dtype(np.float64): GGUFValueType.FLOAT64,
}


def infer_vtype(value: Any) -> Any:
    """The value-type descriptor the writer uses for ``value`` when none is given."""
    if isinstance(value, bool) or isinstance(value, np.bool_):
        return GGUFValueType.BOOL
    if isinstance(value, (int, np.integer)):
        v = int(value)
        if 0 <= v < 2**32:
            return GGUFValueType.UINT32
        return GGUFValueType.INT64 if -(2**63) <= v < 2**63 else GGUFValueType.UINT64
    if isinstance(value, (float, np.floating)):
        return GGUFValueType.FLOAT32
    if isinstance(value, str):
        return GGUFValueType.STRING
    if isinstance(value, np.ndarray):
        if value.dtype not in _NP_TO_VT:
            raise TypeError(f"cannot store numpy dtype {value.dtype} in GGUF")
        return (GGUFValueType.ARRAY, _NP_TO_VT[value.dtype])
    if isinstance(value, (list, tuple)):
        if not value:
            return (GGUFValueType.ARRAY, GGUFValueType.INT32)
        first = value[0]
        if isinstance(first, str):
            return (GGUFValueType.ARRAY, GGUFValueType.STRING)
        if isinstance(first, (list, tuple, np.ndarray)):
            return (GGUFValueType.ARRAY, GGUFValueType.ARRAY)
        if isinstance(first, (bool, np.bool_)):
            return (GGUFValueType.ARRAY, GGUFValueType.BOOL)
        if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value):
            return (GGUFValueType.ARRAY, GGUFValueType.INT32)
        return (GGUFValueType.ARRAY, GGUFValueType.FLOAT32)
    raise TypeError(f"cannot store a {type(value).__name__} in GGUF metadata")


def _pack_string(s: str) -> bytes:
    b = s.encode("utf-8", errors="surrogateescape")
    return struct.pack("<Q", len(b)) + b


def _pack_value(value: Any, vt: Any) -> bytes:
    """Encode a value WITHOUT its leading type id (the caller writes that)."""
    if isinstance(vt, tuple):
        et = vt[1]
        out = [struct.pack("<IQ", int(et), len(value))]
        if et == GGUFValueType.STRING:
            out += [_pack_string(s) for s in value]
        elif et == GGUFValueType.ARRAY:
            for sub in value:
                sub_vt = infer_vtype(sub)
                out.append(struct.pack("<I", int(GGUFValueType.ARRAY)) + _pack_value(sub, sub_vt))
        else:
            out.append(np.asarray(value).astype(SCALAR_DTYPES[et]).tobytes())
        return b"".join(out)
    vt = GGUFValueType(vt)
    if vt == GGUFValueType.STRING:
        return _pack_string(value)
    if vt == GGUFValueType.ARRAY:
        raise TypeError("array value type needs an element type: pass (ARRAY, elem_type)")
    return np.array(value).astype(SCALAR_DTYPES[vt]).tobytes()


class GGUFWriter:
    """Collects metadata and tensors, then ``write()`` emits a GGUF v3 file."""

    def __init__(self, path: str | os.PathLike, alignment: int = GGUF_DEFAULT_ALIGNMENT) -> None:
        if alignment <= 0 or alignment & (alignment - 1):
            raise ValueError(f"alignment must be a positive power of two, got {alignment}")
        self.path = Path(path)
        self.alignment = alignment
        self._kv: dict[str, tuple[Any, Any]] = {}
        self._tensors: list[tuple[str, tuple[int, ...], GGMLType, Any, int]] = []
        self._names: set[str] = set()
        if alignment != GGUF_DEFAULT_ALIGNMENT:
            self.add("general.alignment", alignment, GGUFValueType.UINT32)

    def add(self, key: str, value: Any, vtype: Any = None) -> None:
        """Add a metadata key. ``vtype``: a GGUFValueType, (ARRAY, elem type), or None to infer."""
        if key in self._kv:
            raise ValueError(f"metadata key {key!r} added twice")
        self._kv[key] = (value, vtype if vtype is not None else infer_vtype(value))

    def add_tensor(self, name: str, shape: tuple[int, ...], gtype: Any,
                   data: TensorData | Callable[[], TensorData]) -> None:
        """Add a tensor of row-major ``shape``; ``data`` is raw bytes, an array, or a callable."""
        if name in self._names:
            raise ValueError(f"tensor {name!r} added twice")
        gt = ggml_type(gtype)
        shape = tuple(int(d) for d in shape)
        if not 1 <= len(shape) <= 4 or any(d < 0 for d in shape):
            raise ValueError(f"tensor {name!r}: bad shape {shape}")
        blk, bsize = BLOCK_LAYOUT[gt]
        if shape[-1] % blk:
            raise ValueError(f"tensor {name!r}: row length {shape[-1]} not a multiple of {gt.name} block {blk}")
        rows = 1
        for d in shape[:-1]:
            rows *= d
        nbytes = shape[-1] // blk * bsize * rows
        self._names.add(name)
        self._tensors.append((name, shape, gt, data, nbytes))

    def _header(self) -> bytes:
        out = [GGUF_MAGIC, struct.pack("<IQQ", 3, len(self._tensors), len(self._kv))]
        for key, (value, vt) in self._kv.items():
            vt_id = GGUFValueType.ARRAY if isinstance(vt, tuple) else GGUFValueType(vt)
            out.append(_pack_string(key) + struct.pack("<I", int(vt_id)) + _pack_value(value, vt))
        offset = 0
        for name, shape, gt, _, nbytes in self._tensors:
            ne = tuple(reversed(shape))
            out.append(_pack_string(name) + struct.pack(f"<I{len(ne)}qIQ", len(ne), *ne, int(gt), offset))
            offset += nbytes + (-nbytes) % self.alignment
        head = b"".join(out)
        return head + b"\0" * ((-len(head)) % self.alignment)

    def write(self) -> Path:
        """Write the file (atomically: temp name, then rename). Returns the path."""
        tmp = self.path.with_name(self.path.name + ".partial")
        try:
            with open(tmp, "wb") as f:
                f.write(self._header())
                for name, shape, gt, data, nbytes in self._tensors:
                    buf = _tensor_bytes(name, gt, data() if callable(data) else data)
                    if buf.nbytes != nbytes:
                        raise GGUFError(self.path, f"data has {buf.nbytes} bytes, shape {shape} of "
                                        f"{gt.name} needs {nbytes}", f"tensor {name}")
                    f.write(buf)
                    f.write(b"\0" * ((-nbytes) % self.alignment))
            os.replace(tmp, self.path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return self.path


def _tensor_bytes(name: str, gt: GGMLType, data: TensorData) -> memoryview:
    if isinstance(data, np.ndarray):
        if data.dtype == np.uint8:
            arr = data
        elif gt == GGMLType.F32:
            arr = data.astype("<f4", copy=False)
        elif gt == GGMLType.F16 and data.dtype != np.float16:
            arr = data.astype("<f2")
        elif data.dtype in (np.float16, np.int8, np.int16, np.int32, np.int64, np.float64, np.uint16):
            arr = data
        else:
            raise ValueError(f"tensor {name!r}: pass raw uint8 blocks for {gt.name}, got dtype {data.dtype}")
        return memoryview(np.ascontiguousarray(arr)).cast("B")
    return memoryview(data).cast("B")
