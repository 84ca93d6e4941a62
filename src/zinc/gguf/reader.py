"""GGUF v2/v3 reader over mmap: metadata, tensor infos, zero-copy tensor bytes, split files.

Every malformed input raises `zinc.errors.GGUFError` naming the file and the field or tensor.
Counts and lengths are checked against the bytes left in the file before anything is allocated,
so a small corrupt file can never cause a large allocation.

Metadata values are returned as Python scalars (int, float, bool, str); arrays of strings as
``list[str]``; arrays of numbers or bools as read-only 1-D numpy arrays; nested arrays as lists.
Strings that are not valid UTF-8 keep their bytes through ``surrogateescape``.
"""

from __future__ import annotations

import mmap
import os
import re
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from zinc.errors import GGUFError
from zinc.gguf.constants import (
    BLOCK_LAYOUT,
    GGUF_DEFAULT_ALIGNMENT,
    GGUF_MAGIC,
    SCALAR_DTYPES,
    GGMLType,
    GGUFValueType,
)

MAX_DIMS = 4
MAX_ARRAY_DEPTH = 8
MIN_KV_BYTES = 8 + 4 + 1  # key length, value type, smallest value
MIN_TENSOR_INFO_BYTES = 8 + 4 + 8 + 4 + 8  # name length, n_dims, one dim, type, offset
_SPLIT_RE = re.compile(r"^(?P<prefix>.*)-(?P<no>\d{5})-of-(?P<count>\d{5})\.gguf$")

# A value-type descriptor: a GGUFValueType, or (ARRAY, element descriptor) for arrays.
VType = Any


@dataclass(frozen=True)
class TensorInfo:
    """One tensor of a GGUF file. ``ne`` is ggml order (innermost first), ``shape`` row-major."""

    name: str
    ggml_type: GGMLType
    ne: tuple[int, ...]
    offset: int  # relative to the data blob of its file
    nbytes: int
    file_index: int = 0

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(reversed(self.ne))

    @property
    def n_elements(self) -> int:
        n = 1
        for d in self.ne:
            n *= d
        return n


class _Cursor:
    """Bounds-checked little-endian reads from a buffer; failures name the field being read."""

    def __init__(self, buf: memoryview, path: str) -> None:
        self.buf = buf
        self.pos = 0
        self.path = path

    def left(self) -> int:
        return len(self.buf) - self.pos

    def need(self, n: int, what: str) -> None:
        if n < 0 or n > self.left():
            raise GGUFError(
                self.path,
                f"truncated file: {what} needs {n} bytes at offset {self.pos}, only {self.left()} left",
                what,
            )

    def unpack(self, fmt: str, what: str) -> tuple:
        size = struct.calcsize(fmt)
        self.need(size, what)
        out = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += size
        return out

    def u32(self, what: str) -> int:
        return self.unpack("<I", what)[0]

    def u64(self, what: str) -> int:
        return self.unpack("<Q", what)[0]

    def string(self, what: str) -> str:
        n = self.u64(what + " (string length)")
        self.need(n, what)
        raw = bytes(self.buf[self.pos : self.pos + n])
        self.pos += n
        return raw.decode("utf-8", errors="surrogateescape")

    def array(self, dtype: str, count: int, what: str) -> np.ndarray:
        itemsize = np.dtype(dtype).itemsize
        self.need(count * itemsize, what)
        arr = np.frombuffer(self.buf, dtype=dtype, count=count, offset=self.pos).copy()
        self.pos += count * itemsize
        arr.flags.writeable = False
        return arr


def _value_type(cur: _Cursor, key: str) -> GGUFValueType:
    raw = cur.u32(f"{key} (value type)")
    try:
        return GGUFValueType(raw)
    except ValueError:
        raise GGUFError(cur.path, f"unknown metadata value type {raw}", key) from None


def _read_value(cur: _Cursor, vt: GGUFValueType, key: str, depth: int = 0) -> tuple[Any, VType]:
    if vt == GGUFValueType.STRING:
        return cur.string(key), vt
    if vt == GGUFValueType.ARRAY:
        return _read_array(cur, key, depth)
    dtype = SCALAR_DTYPES[vt]
    val = cur.array(dtype, 1, key)[0]
    if vt == GGUFValueType.BOOL:
        return bool(val), vt
    if vt in (GGUFValueType.FLOAT32, GGUFValueType.FLOAT64):
        return float(val), vt
    return int(val), vt


def _read_strings(cur: _Cursor, count: int, key: str) -> list[str]:
    """A tight loop for the large string arrays of tokenizers (hundreds of thousands of entries)."""
    buf, pos, end = cur.buf, cur.pos, len(cur.buf)
    unpack = struct.Struct("<Q").unpack_from
    out = []
    append = out.append
    for i in range(count):
        if pos + 8 > end:
            cur.pos = pos
            cur.need(8, f"{key}[{i}] (string length)")
        n = unpack(buf, pos)[0]
        pos += 8
        if n > end - pos:
            cur.pos = pos
            cur.need(n, f"{key}[{i}]")
        append(str(buf[pos : pos + n], "utf-8", "surrogateescape"))
        pos += n
    cur.pos = pos
    return out


def _read_array(cur: _Cursor, key: str, depth: int) -> tuple[Any, VType]:
    if depth >= MAX_ARRAY_DEPTH:
        raise GGUFError(cur.path, f"arrays nested deeper than {MAX_ARRAY_DEPTH}", key)
    et = _value_type(cur, key + " (array element type)")
    count = cur.u64(key + " (array length)")
    if et == GGUFValueType.STRING:
        if count * 8 > cur.left():
            raise GGUFError(cur.path, f"array of {count} strings cannot fit in the {cur.left()} bytes left", key)
        return _read_strings(cur, count, key), (GGUFValueType.ARRAY, et)
    if et == GGUFValueType.ARRAY:
        if count * 12 > cur.left():
            raise GGUFError(cur.path, f"array of {count} arrays cannot fit in the {cur.left()} bytes left", key)
        items = []
        for i in range(count):
            sub_t = _value_type(cur, f"{key}[{i}]")
            if sub_t != GGUFValueType.ARRAY:
                raise GGUFError(cur.path, "nested array element is not an array", f"{key}[{i}]")
            items.append(_read_array(cur, f"{key}[{i}]", depth + 1)[0])
        return items, (GGUFValueType.ARRAY, et)
    arr = cur.array(SCALAR_DTYPES[et], count, key)
    if et == GGUFValueType.BOOL:
        arr = arr.astype(bool)
        arr.flags.writeable = False
    return arr, (GGUFValueType.ARRAY, et)


def _read_tensor_info(cur: _Cursor, index: int, file_index: int) -> tuple[TensorInfo, int]:
    name = cur.string(f"tensor #{index} name")
    n_dims = cur.u32(f"tensor {name!r} n_dims")
    if not 1 <= n_dims <= MAX_DIMS:
        raise GGUFError(cur.path, f"n_dims = {n_dims}, must be 1..{MAX_DIMS}", f"tensor {name}")
    ne = cur.unpack(f"<{n_dims}q", f"tensor {name!r} shape")
    raw_type = cur.u32(f"tensor {name!r} type")
    offset = cur.u64(f"tensor {name!r} offset")
    if any(d < 0 for d in ne):
        raise GGUFError(cur.path, f"negative dimension in shape {list(ne)}", f"tensor {name}")
    try:
        gt = GGMLType(raw_type)
    except ValueError:
        raise GGUFError(cur.path, f"unknown ggml type {raw_type}", f"tensor {name}") from None
    blk, bsize = BLOCK_LAYOUT[gt]
    if ne[0] % blk:
        raise GGUFError(
            cur.path, f"ne[0] = {ne[0]} is not a multiple of the {gt.name} block size {blk}", f"tensor {name}"
        )
    rows = 1
    for d in ne[1:]:
        rows *= d
    nbytes = ne[0] // blk * bsize * rows
    return TensorInfo(name, gt, tuple(int(d) for d in ne), int(offset), int(nbytes), file_index), offset


class _Part:
    """One physical GGUF file: its mmap, parsed header, metadata and tensor infos."""

    def __init__(self, path: Path, file_index: int = 0) -> None:
        self.path = path
        self.file_index = file_index
        try:
            self._fh = open(path, "rb")
        except OSError as e:
            raise GGUFError(path, f"cannot open: {e.strerror or e}") from None
        try:
            size = os.fstat(self._fh.fileno()).st_size
            if size == 0:
                raise GGUFError(path, "empty file (0 bytes), not a GGUF file", "magic")
            self._mm = mmap.mmap(self._fh.fileno(), 0, access=mmap.ACCESS_READ)
            self.buf = memoryview(self._mm)
            self._parse()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        buf = getattr(self, "buf", None)
        if buf is not None:
            buf.release()
            self.buf = None
        mm = getattr(self, "_mm", None)
        if mm is not None:
            try:
                mm.close()
            except BufferError:  # a caller still holds a zero-copy view; the OS frees it later
                pass
            self._mm = None
        if getattr(self, "_fh", None) is not None:
            self._fh.close()
            self._fh = None

    def _parse(self) -> None:
        path = str(self.path)
        cur = _Cursor(self.buf, path)
        cur.need(4, "magic")
        magic = bytes(self.buf[:4])
        if magic != GGUF_MAGIC:
            raise GGUFError(path, f"bad magic {magic!r}, expected {GGUF_MAGIC!r}: not a GGUF file", "magic")
        cur.pos = 4
        version = cur.u32("version")
        if version & 0xFFFF == 0 and version != 0:
            raise GGUFError(path, f"version {version:#x} looks byte-swapped: big-endian GGUF is not supported", "version")
        if version not in (2, 3):
            raise GGUFError(path, f"unsupported GGUF version {version} (supported: 2, 3)", "version")
        self.version = version
        n_tensors = cur.u64("n_tensors")
        n_kv = cur.u64("n_kv")
        if n_kv * MIN_KV_BYTES > cur.left():
            raise GGUFError(path, f"n_kv = {n_kv} cannot fit in the {cur.left()} bytes left", "n_kv")
        if n_tensors * MIN_TENSOR_INFO_BYTES > cur.left():
            raise GGUFError(path, f"n_tensors = {n_tensors} cannot fit in the {cur.left()} bytes left", "n_tensors")
        self.metadata: dict[str, Any] = {}
        self.metadata_types: dict[str, VType] = {}
        for i in range(n_kv):
            key = cur.string(f"metadata key #{i}")
            vt = _value_type(cur, key)
            if key in self.metadata:
                raise GGUFError(path, "duplicate metadata key", key)
            self.metadata[key], self.metadata_types[key] = _read_value(cur, vt, key)
        self.alignment = self._alignment()
        self.tensors: dict[str, TensorInfo] = {}
        for i in range(n_tensors):
            info, offset = _read_tensor_info(cur, i, self.file_index)
            if info.name in self.tensors:
                raise GGUFError(path, "duplicate tensor name", f"tensor {info.name}")
            if offset % self.alignment:
                raise GGUFError(path, f"offset {offset} is not a multiple of the alignment {self.alignment}",
                                f"tensor {info.name}")
            self.tensors[info.name] = info
        pad = (-cur.pos) % self.alignment
        self.data_start = cur.pos + pad
        self._check_ranges(len(self.buf))

    def _alignment(self) -> int:
        key = "general.alignment"
        if key not in self.metadata:
            return GGUF_DEFAULT_ALIGNMENT
        val, vt = self.metadata[key], self.metadata_types[key]
        if vt != GGUFValueType.UINT32:
            raise GGUFError(self.path, f"must be UINT32, found {getattr(vt, 'name', vt)}", key)
        if val <= 0 or val & (val - 1):
            raise GGUFError(self.path, f"alignment {val} is not a positive power of two", key)
        return val

    def _check_ranges(self, file_size: int) -> None:
        if self.tensors and self.data_start > file_size:
            raise GGUFError(self.path, f"truncated file: data section starts at {self.data_start}, "
                            f"file has {file_size} bytes", "tensor data")
        spans = []
        for t in self.tensors.values():
            start = self.data_start + t.offset
            if start + t.nbytes > file_size:
                raise GGUFError(self.path, f"tensor data [{start}, {start + t.nbytes}) is out of range: "
                                f"file has {file_size} bytes (truncated?)", f"tensor {t.name}")
            spans.append((t.offset, t.offset + t.nbytes, t.name))
        spans.sort()
        for (s0, e0, n0), (s1, e1, n1) in zip(spans, spans[1:]):
            if s1 < e0 and e1 > s1:
                raise GGUFError(self.path, f"tensor data overlaps tensor {n0!r}", f"tensor {n1}")


class GGUFFile:
    """A GGUF model (one file, or all shards of a split model) opened read-only over mmap.

    Attributes: ``path``, ``version``, ``alignment``, ``metadata``, ``metadata_types``,
    ``tensors`` (name → TensorInfo, in file order), ``data_start`` (of the first file).
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        first = _Part(self.path, 0)
        self._parts = [first]
        try:
            self._open_splits(first)
        except BaseException:
            self.close()
            raise
        self.version = first.version
        self.alignment = first.alignment
        self.data_start = first.data_start
        self.metadata = first.metadata
        self.metadata_types = first.metadata_types
        self.tensors: dict[str, TensorInfo] = {}
        for part in self._parts:
            for name, info in part.tensors.items():
                if name in self.tensors:
                    raise GGUFError(part.path, "tensor also present in an earlier shard", f"tensor {name}")
                self.tensors[name] = info

    def _open_splits(self, first: _Part) -> None:
        count = first.metadata.get("split.count", 1)
        if not isinstance(count, int) or count <= 1:
            return
        m = _SPLIT_RE.match(self.path.name)
        if not m or int(m.group("no")) != 1:
            raise GGUFError(self.path, f"file is shard of a {count}-file split model; open the "
                            "'-00001-of-...' file", "split.count")
        for i in range(2, count + 1):
            p = self.path.with_name(f"{m.group('prefix')}-{i:05d}-of-{count:05d}.gguf")
            if not p.exists():
                raise GGUFError(p, f"missing shard {i} of {count}", "split.count")
            self._parts.append(_Part(p, i - 1))

    # -- access -------------------------------------------------------------------------------
    def get(self, key: str, default: Any = None) -> Any:
        return self.metadata.get(key, default)

    @property
    def architecture(self) -> str | None:
        return self.metadata.get("general.architecture")

    def info(self, name: str) -> TensorInfo:
        try:
            return self.tensors[name]
        except KeyError:
            raise GGUFError(self.path, "no such tensor in the file", f"tensor {name}") from None

    def raw(self, name: str) -> np.ndarray:
        """The tensor's bytes as a read-only uint8 array viewing the mmap (zero-copy)."""
        t = self.info(name)
        part = self._parts[t.file_index]
        if part.buf is None:
            raise GGUFError(part.path, "file is closed", f"tensor {name}")
        start = part.data_start + t.offset
        return np.frombuffer(part.buf, dtype=np.uint8, count=t.nbytes, offset=start)

    def tensor(self, name: str) -> np.ndarray:
        """The tensor dequantized to float32, in row-major shape."""
        from zinc.gguf.quants import dequantize

        t = self.info(name)
        return dequantize(self.raw(name), t.ggml_type, t.n_elements).reshape(t.shape)

    def close(self) -> None:
        for p in self._parts:
            p.close()

    def __enter__(self) -> "GGUFFile":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"GGUFFile({str(self.path)!r}, v{self.version}, arch={self.architecture!r}, "
                f"{len(self.metadata)} keys, {len(self.tensors)} tensors)")
