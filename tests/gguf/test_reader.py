"""GGUF reader/writer: round trips of every value type, tensor infos, validation errors, splits."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from zinc.errors import GGUFError
from zinc.gguf import GGMLType, GGUFFile, GGUFValueType, GGUFWriter

VT = GGUFValueType


def _write_sample(path: Path, rng: np.random.Generator, alignment: int = 32) -> dict:
    w = GGUFWriter(path, alignment=alignment)
    kv = {
        "general.architecture": ("llama", None),
        "u8": (200, VT.UINT8), "i8": (-100, VT.INT8), "u16": (60000, VT.UINT16), "i16": (-30000, VT.INT16),
        "u32": (4_000_000_000, VT.UINT32), "i32": (-2_000_000_000, VT.INT32), "f32": (1.5, VT.FLOAT32),
        "b": (True, VT.BOOL), "s": ("héllo ✓", VT.STRING), "u64": (2**63 + 5, VT.UINT64),
        "i64": (-(2**62), VT.INT64), "f64": (0.1, VT.FLOAT64),
        "a_str": (["a", "", "ñ", "<0x0A>"], None),
        "a_i32": (np.array([1, -2, 3], dtype=np.int32), None),
        "a_f32": (rng.standard_normal(5).astype(np.float32), None),
        "a_bool": ([True, False, True], None),
        "a_nested": ([np.array([1, 2], dtype=np.int32), np.array([3], dtype=np.int32)], None),
        "a_empty": ([], None),
    }
    for k, (v, t) in kv.items():
        w.add(k, v, t)
    tensors = {
        "t.f32": (GGMLType.F32, rng.standard_normal((3, 5)).astype(np.float32)),
        "t.f16": (GGMLType.F16, rng.standard_normal((2, 7)).astype(np.float16)),
        "t.q8": (GGMLType.Q8_0, rng.integers(0, 256, (4, 2 * 34), dtype=np.uint8)),
        "t.1d": (GGMLType.F32, rng.standard_normal(9).astype(np.float32)),
    }
    shapes = {"t.f32": (3, 5), "t.f16": (2, 7), "t.q8": (4, 64), "t.1d": (9,)}
    for name, (gt, data) in tensors.items():
        w.add_tensor(name, shapes[name], gt, (lambda d=data: d) if name == "t.q8" else data)
    w.write()
    return {"kv": kv, "tensors": tensors, "shapes": shapes}


def test_round_trip_every_value_type(tmp_path):
    rng = np.random.default_rng()
    p = tmp_path / "m.gguf"
    ref = _write_sample(p, rng)
    with GGUFFile(p) as f:
        assert f.version == 3 and f.alignment == 32
        for k, (v, t) in ref["kv"].items():
            got = f.metadata[k]
            if isinstance(v, np.ndarray):
                np.testing.assert_array_equal(got, v)
                assert got.dtype == v.dtype
            elif k == "a_nested":
                assert [list(x) for x in got] == [[1, 2], [3]]
            elif k == "a_bool":
                assert got.dtype == bool and list(got) == v
            elif k == "f32":
                assert got == pytest.approx(v)
            elif k == "a_empty":
                assert len(got) == 0
            else:
                assert got == v, k
            if t is not None:
                assert f.metadata_types[k] == t
        assert f.metadata_types["a_str"] == (VT.ARRAY, VT.STRING)
        assert list(f.tensors) == list(ref["tensors"])
        for name, (gt, data) in ref["tensors"].items():
            info = f.tensors[name]
            assert info.ggml_type == gt
            assert info.shape == ref["shapes"][name]
            assert info.ne == tuple(reversed(ref["shapes"][name]))
            assert (f.data_start + info.offset) % 32 == 0
            raw = f.raw(name)
            assert raw.nbytes == info.nbytes and not raw.flags.writeable
            np.testing.assert_array_equal(raw, np.frombuffer(data.tobytes(), np.uint8))
        np.testing.assert_array_equal(f.tensor("t.f32"), ref["tensors"]["t.f32"][1])
        np.testing.assert_array_equal(f.tensor("t.f16"), ref["tensors"]["t.f16"][1].astype(np.float32))


def test_custom_alignment(tmp_path):
    p = tmp_path / "a.gguf"
    _write_sample(p, np.random.default_rng(), alignment=64)
    with GGUFFile(p) as f:
        assert f.alignment == 64
        assert all((f.data_start + t.offset) % 64 == 0 for t in f.tensors.values())


def test_reader_matches_gguf_package(vocab_dir):
    gguf = pytest.importorskip("gguf")
    path = vocab_dir / "ggml-vocab-llama-spm.gguf"
    ref = gguf.GGUFReader(path)
    with GGUFFile(path) as f:
        for field in ref.fields.values():
            if field.name.startswith("GGUF."):
                continue
            val = f.metadata[field.name]
            exp = field.contents()
            if isinstance(val, np.ndarray):
                np.testing.assert_array_equal(val, np.asarray(exp))
            elif isinstance(val, float):
                assert val == pytest.approx(exp)
            else:
                assert val == exp, field.name


def _bytes(p: Path) -> bytearray:
    return bytearray(p.read_bytes())


@pytest.fixture()
def sample(tmp_path) -> Path:
    p = tmp_path / "s.gguf"
    _write_sample(p, np.random.default_rng())
    return p


def _expect(tmp_path, data: bytes, match: str, name="bad.gguf"):
    p = tmp_path / name
    p.write_bytes(bytes(data))
    with pytest.raises(GGUFError, match=match) as ei:
        GGUFFile(p)
    assert str(p) in str(ei.value)
    return ei.value


def test_bad_magic(tmp_path, sample):
    b = _bytes(sample)
    b[:4] = b"GGML"
    _expect(tmp_path, b, "bad magic")


def test_empty_and_tiny_files(tmp_path):
    _expect(tmp_path, b"", "empty file")
    _expect(tmp_path, b"GG", "truncated")
    _expect(tmp_path, b"GGUF\x03\x00", "truncated")


@pytest.mark.parametrize("version,msg", [(1, "unsupported GGUF version 1"), (4, "unsupported GGUF version 4"),
                                         (0x03000000, "byte-swapped")])
def test_versions(tmp_path, sample, version, msg):
    b = _bytes(sample)
    b[4:8] = struct.pack("<I", version)
    _expect(tmp_path, b, msg)


def test_v2_accepted(tmp_path, sample):
    b = _bytes(sample)
    b[4:8] = struct.pack("<I", 2)
    p = tmp_path / "v2.gguf"
    p.write_bytes(bytes(b))
    with GGUFFile(p) as f:
        assert f.version == 2 and len(f.tensors) == 4


def test_truncated_everywhere(tmp_path, sample):
    b = bytes(_bytes(sample))
    with GGUFFile(sample) as f:
        data_start = f.data_start
        last = max(f.tensors.values(), key=lambda t: t.offset)
        end = data_start + last.offset + last.nbytes
    for cut in sorted(set([5, 12, 24, 30, 100, data_start - 3, data_start + 10, end - 1])):
        if 0 < cut < len(b):
            _expect(tmp_path, b[:cut], "truncated|out of range", name=f"cut{cut}.gguf")


def test_absurd_counts_rejected_without_allocation(tmp_path):
    head = b"GGUF" + struct.pack("<I", 3)
    _expect(tmp_path, head + struct.pack("<QQ", 2**60, 0), "n_tensors")
    _expect(tmp_path, head + struct.pack("<QQ", 0, 2**60), "n_kv")
    # one key whose string length claims 2^62 bytes
    _expect(tmp_path, head + struct.pack("<QQQ", 0, 1, 2**62) + b"abc" + b"\0" * 64, "truncated")
    # one array of 2^40 int32
    kv = struct.pack("<Q", 1) + b"k" + struct.pack("<IIQ", 9, 5, 2**40) + b"\0" * 64
    _expect(tmp_path, head + struct.pack("<QQ", 0, 1) + kv, "truncated")
    # one array of 2^40 strings
    kv = struct.pack("<Q", 1) + b"k" + struct.pack("<IIQ", 9, 8, 2**40) + b"\0" * 64
    _expect(tmp_path, head + struct.pack("<QQ", 0, 1) + kv, "cannot fit")
    # unknown value type
    kv = struct.pack("<Q", 1) + b"k" + struct.pack("<I", 99) + b"\0" * 16
    _expect(tmp_path, head + struct.pack("<QQ", 0, 1) + kv, "unknown metadata value type 99")


def _one_tensor_file(ne, gtype, offset=0, data=b"", n_dims=None, alignment_kv=None) -> bytes:
    kvs = b""
    n_kv = 0
    if alignment_kv is not None:
        vt, val = alignment_kv
        kvs = struct.pack("<Q", 17) + b"general.alignment" + struct.pack("<I", vt) + val
        n_kv = 1
    n_dims = len(ne) if n_dims is None else n_dims
    info = struct.pack("<Q", 1) + b"w" + struct.pack("<I", n_dims) + struct.pack(f"<{len(ne)}q", *ne)
    info += struct.pack("<IQ", gtype, offset)
    head = b"GGUF" + struct.pack("<IQQ", 3, 1, n_kv) + kvs + info
    head += b"\0" * ((-len(head)) % 32)
    return head + data


def test_tensor_validation(tmp_path):
    ok = _one_tensor_file((4,), 0, data=b"\0" * 16)
    p = tmp_path / "ok.gguf"
    p.write_bytes(ok)
    with GGUFFile(p) as f:
        assert f.tensors["w"].shape == (4,)
    _expect(tmp_path, _one_tensor_file((4,), 77, data=b"\0" * 16), "unknown ggml type 77")
    _expect(tmp_path, _one_tensor_file((4,), 0, data=b"\0" * 15), "out of range")
    _expect(tmp_path, _one_tensor_file((2**40, 2**20), 0, data=b"\0" * 16), "out of range")
    _expect(tmp_path, _one_tensor_file((33,), 8, data=b"\0" * 64), "not a multiple of the Q8_0 block")
    _expect(tmp_path, _one_tensor_file((4,), 0, offset=3, data=b"\0" * 32), "alignment")
    _expect(tmp_path, _one_tensor_file((4,), 0, n_dims=5), "n_dims")
    _expect(tmp_path, _one_tensor_file((-4,), 0, data=b"\0" * 16), "negative")
    _expect(tmp_path, _one_tensor_file((4,), 0, data=b"\0" * 16, alignment_kv=(5, struct.pack("<i", 32))),
            "must be UINT32")
    _expect(tmp_path, _one_tensor_file((4,), 0, data=b"\0" * 16, alignment_kv=(4, struct.pack("<I", 48))),
            "power of two")


def test_overlapping_tensors(tmp_path):
    w = GGUFWriter(tmp_path / "o.gguf")
    w.add_tensor("a", (8,), GGMLType.F32, np.ones(8, np.float32))
    w.add_tensor("b", (8,), GGMLType.F32, np.ones(8, np.float32))
    w.write()
    b = _bytes(tmp_path / "o.gguf")
    # rewrite tensor b's offset (the last u64 before padding of the info section) to 0
    with GGUFFile(tmp_path / "o.gguf") as f:
        off_b = f.tensors["b"].offset
    idx = b.rfind(struct.pack("<Q", off_b), 0, 200)
    b[idx : idx + 8] = struct.pack("<Q", 0)
    _expect(tmp_path, b, "overlaps")


def test_writer_rejects_bad_data_and_keeps_target(tmp_path):
    target = tmp_path / "keep.gguf"
    target.write_bytes(b"precious")
    w = GGUFWriter(target)
    w.add_tensor("a", (2, 32), "Q8_0", lambda: np.zeros(10, np.uint8))
    with pytest.raises(GGUFError, match="needs 68"):
        w.write()
    assert target.read_bytes() == b"precious"
    assert not (tmp_path / "keep.gguf.partial").exists()


def test_split_files(tmp_path):
    rng = np.random.default_rng()
    a, b = rng.standard_normal(8).astype(np.float32), rng.standard_normal(16).astype(np.float32)
    for i, (name, data) in enumerate([("x", a), ("y", b)], start=1):
        w = GGUFWriter(tmp_path / f"m-{i:05d}-of-00002.gguf")
        w.add("split.no", i - 1, VT.UINT16)
        w.add("split.count", 2, VT.UINT16)
        w.add("split.tensors.count", 2, VT.INT32)
        w.add_tensor(name, data.shape, "F32", data)
        w.write()
    with GGUFFile(tmp_path / "m-00001-of-00002.gguf") as f:
        assert list(f.tensors) == ["x", "y"]
        np.testing.assert_array_equal(f.tensor("y"), b)
    with pytest.raises(GGUFError, match="shard"):
        GGUFFile(tmp_path / "m-00002-of-00002.gguf")
    (tmp_path / "m-00002-of-00002.gguf").unlink()
    with pytest.raises(GGUFError, match="missing shard 2 of 2"):
        GGUFFile(tmp_path / "m-00001-of-00002.gguf")


def test_missing_tensor_and_file(tmp_path, sample):
    with GGUFFile(sample) as f:
        with pytest.raises(GGUFError, match="no such tensor"):
            f.raw("nope")
    with pytest.raises(GGUFError, match="cannot open"):
        GGUFFile(tmp_path / "does-not-exist.gguf")
