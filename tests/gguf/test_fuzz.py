"""Fuzz the GGUF reader: mutated and truncated headers give only GGUFError, fast, with bounded memory."""

from __future__ import annotations

import os
import resource
import struct
import time

import numpy as np

from zinc.errors import GGUFError
from zinc.gguf import GGMLType, GGUFFile, GGUFWriter

N_CASES = int(os.environ.get("ZINC_FUZZ_CASES", "3000"))


def _seed_file(path, rng):
    w = GGUFWriter(path)
    w.add("general.architecture", "llama")
    w.add("llama.block_count", 2)
    w.add("tokenizer.ggml.tokens", ["a", "b", "<s>", "héllo"])
    w.add("tokenizer.ggml.scores", np.array([0.0, -1.0, -2.0, -3.0], np.float32))
    w.add("nested", [np.array([1, 2], np.int32), np.array([3], np.int32)])
    w.add_tensor("token_embd.weight", (4, 32), GGMLType.Q8_0, rng.integers(0, 256, 4 * 34, dtype=np.uint8))
    w.add_tensor("output_norm.weight", (32,), GGMLType.F32, rng.standard_normal(32).astype(np.float32))
    w.write()


def _mutate(data: bytes, rng: np.random.Generator, header_len: int) -> bytes:
    b = bytearray(data)
    kind = rng.integers(0, 5)
    if kind == 0:  # truncate
        return bytes(b[: rng.integers(0, len(b))])
    if kind == 1:  # flip random bytes in the header
        for _ in range(rng.integers(1, 8)):
            b[rng.integers(0, header_len)] = rng.integers(0, 256)
        return bytes(b)
    if kind == 2:  # plant an extreme u64/u32 at a random header position
        pos = int(rng.integers(0, header_len - 8))
        val = [0, 1, 2**31, 2**32 - 1, 2**40, 2**62, 2**64 - 1][int(rng.integers(0, 7))]
        b[pos : pos + 8] = struct.pack("<Q", val)
        return bytes(b)
    if kind == 3:  # insert or delete bytes inside the header
        pos = int(rng.integers(0, header_len))
        if rng.integers(0, 2):
            return bytes(b[:pos] + bytes(rng.integers(0, 256, rng.integers(1, 16), dtype=np.uint8)) + b[pos:])
        return bytes(b[:pos] + b[pos + int(rng.integers(1, 16)) :])
    return bytes(rng.integers(0, 256, rng.integers(0, 256), dtype=np.uint8))  # random junk


def test_fuzz_headers(tmp_path):
    rng = np.random.default_rng()
    seed_path = tmp_path / "seed.gguf"
    _seed_file(seed_path, rng)
    data = seed_path.read_bytes()
    with GGUFFile(seed_path) as f:
        header_len = f.data_start
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    target = tmp_path / "fuzz.gguf"
    outcomes = {"error": 0, "ok": 0}
    slowest = 0.0
    for i in range(N_CASES):
        case = _mutate(data, rng, header_len)
        target.write_bytes(case)
        t0 = time.perf_counter()
        try:
            with GGUFFile(target) as f:
                for name in f.tensors:
                    f.raw(name)
            outcomes["ok"] += 1
        except GGUFError as e:
            assert str(target) in str(e)
            outcomes["error"] += 1
        except Exception as e:  # anything else is a bug: report the case
            (tmp_path / f"crash{i}.gguf").write_bytes(case)
            raise AssertionError(f"case {i}: {type(e).__name__}: {e}") from e
        slowest = max(slowest, time.perf_counter() - t0)
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert slowest < 1.0, f"slowest case took {slowest:.2f}s"
    assert (rss1 - rss0) < 200 * 1024, f"max RSS grew by {(rss1 - rss0) / 1024:.0f} MB"
    assert outcomes["error"] > N_CASES // 3, outcomes
