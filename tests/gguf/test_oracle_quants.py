"""llama.cpp quantizes a tiny zinc.synth model; zinc decodes every tensor exactly as llama.cpp does.

The reference for each quantized tensor is llama.cpp's own dequantizer: the file's "dequantized
twin" (every tensor converted to F32 by `llama_model_quantize`). Both files must also load and run
in llama.cpp.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from zinc.gguf import GGMLType, GGUFFile
from zinc.gguf.quants import dequantize

pytestmark = pytest.mark.oracle

# (preset, ftype, ggml types that must appear among the quantized tensors)
CASES = [
    ("qwen3-tiny", "Q4_0", {"Q4_0"}),
    ("qwen3-tiny", "Q5_0", {"Q5_0"}),
    ("qwen3-tiny", "Q8_0", {"Q8_0"}),
    ("qwen3-tiny", "Q4_K_M", {"Q4_K", "Q6_K"}),
    ("qwen3-tiny", "Q5_K_M", {"Q5_K", "Q6_K"}),
    ("qwen3-tiny", "Q6_K", {"Q6_K"}),
    ("gpt-oss-tiny", "MXFP4_MOE", {"MXFP4"}),
    ("llama3-tiny", "Q4_K_M", {"Q4_K", "Q6_K"}),
]


@pytest.fixture(scope="module")
def f32_models(tmp_path_factory) -> dict[str, Path]:
    from zinc.synth import write_model

    d = tmp_path_factory.mktemp("synth")
    out = {}
    for preset in sorted({c[0] for c in CASES}):
        out[preset] = write_model(d / f"{preset}-f32.gguf", preset, ftype="F32", seed=1).path
    return out


@pytest.mark.parametrize("preset,ftype,must_have", CASES, ids=[f"{p}-{f}" for p, f, _ in CASES])
def test_llamacpp_quantized_tensors_decode_identically(f32_models, tmp_path, preset, ftype, must_have):
    from zinc.testing import oracle

    src = f32_models[preset]
    q = oracle.quantize(src, tmp_path / f"{preset}-{ftype}.gguf", ftype)
    twin = oracle.dequantized_twin(q, tmp_path / f"{preset}-{ftype}-twin.gguf")
    seen: set[str] = set()
    with GGUFFile(q) as fq, GGUFFile(twin) as ft:
        assert set(fq.tensors) == set(ft.tensors)
        for name, info in fq.tensors.items():
            tinfo = ft.tensors[name]
            assert tinfo.ggml_type == GGMLType.F32 and tinfo.ne == info.ne, name
            ours = dequantize(fq.raw(name), info.ggml_type, info.n_elements)
            ref = ft.tensor(name).reshape(-1)
            same = np.array_equal(ours.view(np.uint32), ref.view(np.uint32))
            assert same, f"{name} ({info.ggml_type.name}): max |diff| {np.max(np.abs(ours - ref))}"
            seen.add(info.ggml_type.name)
    assert must_have <= seen, f"{ftype}: expected {must_have} among {seen}"
    toks = [1, 5, 9, 33, 100, 7]
    for path in (q, twin):
        with oracle.LlamaCppModel(path) as m:
            logits = m.logits(toks)
        assert logits.shape == (len(toks), m.n_vocab) and np.isfinite(logits).all()
