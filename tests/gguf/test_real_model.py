"""Every tensor of the real Gemma 3 270M Q4_K_M file decodes exactly as llama.cpp's gguf-py does."""

from __future__ import annotations

import numpy as np
import pytest

from zinc.gguf import GGUFFile
from zinc.gguf.quants import dequantize


def test_gemma3_270m_every_tensor_bit_exact(gemma3_270m):
    gguf = pytest.importorskip("gguf")
    ref = gguf.GGUFReader(gemma3_270m)
    ref_tensors = {t.name: t for t in ref.tensors}
    types = set()
    with GGUFFile(gemma3_270m) as f:
        assert f.architecture == "gemma3"
        assert set(f.tensors) == set(ref_tensors)
        for name, info in f.tensors.items():
            rt = ref_tensors[name]
            assert int(rt.tensor_type) == int(info.ggml_type), name
            assert tuple(int(d) for d in rt.shape) == info.ne, name
            raw = f.raw(name)
            np.testing.assert_array_equal(raw, np.asarray(rt.data).view(np.uint8).reshape(-1), err_msg=name)
            ours = dequantize(raw, info.ggml_type, info.n_elements)
            theirs = gguf.quants.dequantize(np.asarray(rt.data), rt.tensor_type).reshape(-1).astype(np.float32)
            assert ours.dtype == np.float32
            assert np.array_equal(ours.view(np.uint32), theirs.view(np.uint32)), f"{name} ({info.ggml_type.name})"
            types.add(info.ggml_type.name)
    assert "Q4_K" in types and "F32" in types, types
