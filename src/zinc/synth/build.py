"""`write_model`: a GGUF with a preset's exact tensors and metadata, random weights, any file type.

Quantized tensors are written directly as random but valid blocks (`zinc.gguf.quants.random_blocks`),
so a multi-GB model takes seconds; with ``from_f32=True`` Gaussian values are generated first and
quantized (`quants.quantize`), which gives realistic value distributions for small test models.
Each tensor is produced lazily while the file is written, so peak memory is one tensor. Every
tensor has its own random stream (seeded by the model seed and the tensor name), so the values do
not depend on the order of generation, and a tensor keeps its values across file types.
"""

from __future__ import annotations

import math
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from zinc.errors import QuantError
from zinc.gguf import quants
from zinc.gguf.constants import GGMLType, GGUFValueType as VT, row_nbytes
from zinc.gguf.writer import GGUFWriter
from zinc.synth.layout import TensorSpec, model_metadata, rope_freqs_values, tensor_specs
from zinc.synth.presets import Preset, get_preset
from zinc.synth.quantmix import ftype_info, plan_types
from zinc.synth.vocab import builtin_vocab, vocab_from_file

WEIGHT_STD = 0.02  # std of the values of every weight matrix (embeddings, projections, experts)
QUANT_VERSION = 2
BULK_ROLES = ("embed", "output", "matrix", "expert")  # written as random blocks unless from_f32


@dataclass
class PlannedTensor:
    """A tensor of the file to write: its spec, chosen ggml type and size in bytes."""

    spec: TensorSpec
    ggml_type: GGMLType
    nbytes: int


@dataclass
class WriteResult:
    """Summary of a written model."""

    path: Path
    preset: str
    ftype: str
    n_params: int
    n_bytes: int
    n_tensors: int
    seconds: float
    types: dict[str, int] = field(default_factory=dict)  # ggml type name → tensor count

    def summary(self) -> str:
        mix = ", ".join(f"{k}×{v}" for k, v in sorted(self.types.items()))
        return (f"{self.path}: {self.preset} {self.ftype}, {self.n_params / 1e9:.3f} B params, "
                f"{self.n_tensors} tensors ({mix}), {self.n_bytes / 2**30:.2f} GiB, {self.seconds:.1f} s")


# ---------------------------------------------------------------------------------------------
# values


def _rng(seed: int, name: str) -> np.random.Generator:
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, zlib.crc32(name.encode())])


def role_std(spec: TensorSpec, p: Preset) -> float:
    """Standard deviation of the random values of a weight (also the `random_blocks` scale)."""
    if spec.role == "router":
        # gemma4 feeds the router rmsnorm(x)/sqrt(D)·scale: unit-size weights give O(1) logits
        return 2.0 if p.arch == "gemma4" else 2.0 / math.sqrt(p.n_embd)
    if spec.role == "sinks":
        return 1.0
    return WEIGHT_STD


def float_values(spec: TensorSpec, p: Preset, rng: np.random.Generator) -> np.ndarray:
    """Float32 values of ``spec`` (row-major shape) that keep a random model numerically tame."""
    shape, role = spec.shape, spec.role
    if role == "rope_freqs":
        return np.asarray(rope_freqs_values(p), dtype=np.float32).reshape(shape)
    if role in ("norm", "qk_norm", "scale"):  # every family multiplies by the stored value, so ≈ 1
        v = 1.0 + 0.05 * rng.standard_normal(shape, dtype=np.float32)
        if role == "qk_norm" and p.arch == "gemma4":  # kq_scale is 1: keep q·k of unit size
            v *= np.float32(shape[-1] ** -0.25)
    elif role == "ssm_a":  # -exp(A_log), A_log ~ U(0, log 16)
        v = -np.exp(rng.uniform(0.0, math.log(16.0), shape))
    elif role == "ssm_dt":  # inverse softplus of dt, dt log-uniform in [1e-3, 1e-1]
        dt = np.exp(rng.uniform(math.log(1e-3), math.log(1e-1), shape))
        v = np.log(np.expm1(dt))
    elif role == "conv":  # depthwise taps: keep the output at the size of the input
        v = rng.standard_normal(shape, dtype=np.float32) / np.float32(math.sqrt(shape[-1]))
    else:  # embed, output, matrix, expert, router, bias, sinks, gate_vec
        v = np.float32(role_std(spec, p)) * rng.standard_normal(shape, dtype=np.float32)
    return np.asarray(v, dtype=np.float32)


def tensor_data(spec: TensorSpec, gt: GGMLType, p: Preset, seed: int, from_f32: bool) -> np.ndarray:
    """The bytes (uint8) or float32 values of one tensor, ready for `GGUFWriter`."""
    rng = _rng(seed, spec.name)
    n = spec.n_elements
    if not from_f32 and spec.role in BULK_ROLES:
        return quants.random_blocks(gt, n, rng, scale=role_std(spec, p))
    x = float_values(spec, p, rng)
    if gt == GGMLType.F32:
        return x
    try:
        return quants.quantize(x, gt)
    except QuantError:  # no quantizer for this type: random blocks of the same scale
        return quants.random_blocks(gt, n, rng, scale=max(float(x.std()), 1e-6))


# ---------------------------------------------------------------------------------------------
# plan and write


def is_70b(p: Preset) -> bool:
    """llama.cpp's LLM_TYPE_70B (attn_v gets Q5_K instead of Q4_K)."""
    return p.arch == "llama" and p.n_layer == 80 and p.n_head != p.n_head_kv


def plan(p: Preset, ftype: str = "Q4_K_M") -> list[PlannedTensor]:
    """Tensors of ``p`` with the types llama-quantize would give them in a ``ftype`` file."""
    specs = tensor_specs(p)
    types = plan_types([(s.name, s.shape) for s in specs], ftype, n_layer=p.n_layer, n_expert=p.n_expert,
                       is_70b=is_70b(p))
    return [PlannedTensor(s, types[s.name], row_nbytes(types[s.name], s.n_elements)) for s in specs]


def _resolve_vocab(p: Preset, vocab: str | Path | None) -> tuple[Preset, dict]:
    if vocab is None:
        return p, builtin_vocab(p.vocab, p.n_vocab)
    kv, n_vocab = vocab_from_file(vocab)
    return p.with_vocab(n_vocab), kv


def _general(p: Preset, ftype: str) -> dict[str, tuple[object, object]]:
    return {"general.architecture": (p.arch, VT.STRING), "general.type": ("model", VT.STRING),
            "general.name": (f"zinc-synth {p.name}", VT.STRING),
            "general.file_type": (ftype_info(ftype)[0], VT.UINT32),
            "general.quantization_version": (QUANT_VERSION, VT.UINT32)}


def write_model(path: str | Path, preset: Preset | str, ftype: str = "Q4_K_M", seed: int = 0,
                vocab: str | Path | None = None, from_f32: bool | None = None,
                progress: Callable[[int, int, str, int], None] | None = None) -> WriteResult:
    """Write a random-weight GGUF of ``preset`` to ``path`` and return a summary.

    ``ftype``: a file type of `quantmix.FTYPES` (F32, F16, BF16, Q8_0, Q4_0, Q5_0, Q4_K_M, Q5_K_M,
    Q6_K, MXFP4_MOE, ...). ``vocab``: a GGUF whose `tokenizer.*` keys are copied (its vocabulary size
    replaces the preset's); None builds the family's built-in vocabulary. ``from_f32``: quantize
    Gaussian values instead of writing random blocks (default: only for tiny presets).
    ``progress(i, n, name, bytes_done)`` is called after each tensor.
    """
    t0 = time.perf_counter()
    p = get_preset(preset) if isinstance(preset, str) else preset
    ftype = ftype.upper()
    ftype_info(ftype)
    from_f32 = p.tiny if from_f32 is None else from_f32
    p, tok_kv = _resolve_vocab(p, vocab)
    planned = plan(p, ftype)
    w = GGUFWriter(path)
    for kv in (_general(p, ftype), model_metadata(p), tok_kv):
        for key, (value, vt) in kv.items():
            w.add(key, value, vt)
    done = [0, 0]

    def make(pt: PlannedTensor) -> Callable[[], np.ndarray]:
        def gen() -> np.ndarray:
            data = tensor_data(pt.spec, pt.ggml_type, p, seed, from_f32)
            done[0] += 1
            done[1] += pt.nbytes
            if progress:
                progress(done[0], len(planned), pt.spec.name, done[1])
            return data
        return gen

    for pt in planned:
        w.add_tensor(pt.spec.name, pt.spec.shape, pt.ggml_type, make(pt))
    out = w.write()
    return WriteResult(path=Path(out), preset=p.name, ftype=ftype, n_params=sum(t.spec.n_elements for t in planned),
                       n_bytes=Path(out).stat().st_size, n_tensors=len(planned), seconds=time.perf_counter() - t0,
                       types=dict(Counter(t.ggml_type.name for t in planned)))
