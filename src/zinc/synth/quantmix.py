"""Per-tensor ggml types of a file type, following llama.cpp's `llama-quantize` (no imatrix).

Implements the current rules of [LCP] `src/llama-quant.cpp` (spec quant-formats.md §4):
`tensor_allows_quantization` (norms, 1-D tensors, routers, conv kernels, non-`.weight` tensors keep
their source type), `tensor_get_category`, the type overrides of `llama_tensor_get_type_impl` for
the file types listed in `FTYPES`, and `tensor_type_fallback` for rows that are not a multiple of the
block size. The "source type" is what the HF→GGUF converter writes (F32 for 1-D tensors, norms,
routers, conv kernels and non-`.weight` tensors; the float type of the file, or F16 as the source
of a quantized file, for everything else).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from zinc.gguf.constants import BLOCK_LAYOUT, GGMLType as T
from zinc.synth.layout import sort_key

# LLAMA_FTYPE values ([LCP] include/llama.h) and the default tensor type of each file type
FTYPES: dict[str, tuple[int, T]] = {
    "F32": (0, T.F32), "F16": (1, T.F16), "BF16": (32, T.BF16),
    "Q4_0": (2, T.Q4_0), "Q4_1": (3, T.Q4_1), "Q5_0": (8, T.Q5_0), "Q5_1": (9, T.Q5_1), "Q8_0": (7, T.Q8_0),
    "Q4_K_S": (14, T.Q4_K), "Q4_K_M": (15, T.Q4_K), "Q5_K_S": (16, T.Q5_K), "Q5_K_M": (17, T.Q5_K),
    "Q6_K": (18, T.Q6_K), "MXFP4_MOE": (38, T.MXFP4),
    # not a llama-quantize mix: every matrix with ≥ 256 rows Q4_K, output Q6_K, smaller matrices F32,
    # labelled Q4_K_M. This is the mix of the Qwen3.5-35B-A3B anchor of bench/anchors.md (18.11 GiB).
    "Q4_K_PURE": (15, T.Q4_K),
}
FLOAT_TYPES = (T.F32, T.F16, T.BF16)

_NEVER = ("_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel",
          "per_layer_model_proj", "ssm_conv1d", "shortconv.conv.weight", "indexer.k_proj.weight",
          "indexer.q_proj.weight", "attn_rel_b.weight", "time_mix_first.weight", "time_mix_w0.weight",
          "time_mix_w1.weight", "time_mix_w2.weight", "time_mix_v0.weight", "time_mix_v1.weight",
          "time_mix_v2.weight", "time_mix_a0.weight", "time_mix_a1.weight", "time_mix_a2.weight",
          "time_mix_g1.weight", "time_mix_g2.weight", "time_mix_decay_w1.weight", "time_mix_decay_w2.weight",
          "time_mix_lerp_fused.weight", ".position_embd", ".patch_embd", ".rel_pos")
# converter: these 2-D tensors are always written as F32
_F32_SOURCE = ("ffn_gate_inp.weight", "ffn_gate_inp_shexp.weight", "ssm_conv1d.weight", "position_embd",
               "token_types")
_FALLBACK = {T.Q4_K: T.Q5_0, T.Q5_K: T.Q5_1, T.Q6_K: T.Q8_0, T.Q2_K: T.Q4_0, T.Q3_K: T.Q4_0,
             T.IQ4_XS: T.IQ4_NL}


def ftype_info(ftype: str) -> tuple[int, T]:
    """(`general.file_type` value, default tensor type) of a file-type name such as "Q4_K_M"."""
    try:
        return FTYPES[ftype.upper()]
    except KeyError:
        raise ValueError(f"unsupported file type {ftype!r}; known: {', '.join(FTYPES)}") from None


def allows_quantization(name: str, shape: tuple[int, ...]) -> bool:
    """llama.cpp's `tensor_allows_quantization` (default parameters: the output tensor is quantized)."""
    if len(shape) < 2 or not name.endswith("weight"):
        return False
    return not any(s in name for s in _NEVER)


def source_type(name: str, shape: tuple[int, ...], ftype: str) -> T:
    """The type the HF→GGUF converter writes; quantized files start from an F16 conversion."""
    if len(shape) <= 1 or name.endswith("_norm.weight") or not name.endswith(".weight"):
        return T.F32
    if any(s in name for s in _F32_SOURCE):
        return T.F32
    default = ftype_info(ftype)[1]
    return default if default in FLOAT_TYPES else T.F16


def category(name: str) -> str:
    """`tensor_get_category`: first match wins."""
    if name == "output.weight":
        return "output"
    if name in ("token_embd.weight", "per_layer_token_embd.weight"):
        return "token_embd"
    for key, cat in (("attn_qkv.weight", "attn_v"), ("attn_kv_b.weight", "attn_v"), ("attn_v.weight", "attn_v"),
                     ("attn_k.weight", "attn_k"), ("attn_q.weight", "attn_q"),
                     ("attn_output.weight", "attn_output"), ("ffn_up", "ffn_up"), ("ffn_gate", "ffn_gate"),
                     ("ffn_down", "ffn_down")):
        if key in name:
            return cat
    return "other"


def use_more_bits(i: int, n: int) -> bool:
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


@dataclass
class QuantState:
    """Model facts and running counters of one quantization pass (`quantize_state_impl`)."""

    n_layer: int  # block_count
    n_expert: int = 0
    tied: bool = True
    is_70b: bool = False
    n_attn_v: int = 0
    i_attn_v: int = 0
    i_ffn_down: int = 0


def _layer_of(name: str, fallback: int) -> int:
    if name.startswith("blk."):
        return int(name.split(".")[1])
    return fallback


def _output_type(new: T, ne0: int, ftype: str) -> T:
    if ftype == "MXFP4_MOE" or ne0 % BLOCK_LAYOUT[new][0]:
        return T.Q8_0
    return new if new == T.Q8_0 else T.Q6_K


def _impl(qs: QuantState, new: T, name: str, shape: tuple[int, ...], ftype: str) -> T:
    """`llama_tensor_get_type_impl` restricted to the file types of FTYPES."""
    cat = category(name)
    if cat == "output" or (qs.tied and cat == "token_embd"):
        return _output_type(new, shape[-1], ftype)
    if ftype == "MXFP4_MOE":
        return T.MXFP4 if len(shape) >= 3 and shape[-3] > 1 else T.Q8_0
    if cat == "attn_v":
        if ftype in ("Q4_K_M", "Q5_K_M") and use_more_bits(qs.i_attn_v, qs.n_attn_v):
            new = T.Q6_K
        elif ftype == "Q4_K_S" and qs.i_attn_v < 4:
            new = T.Q5_K
        if qs.is_70b and new in (T.Q3_K, T.Q4_K):
            new = T.Q5_K
        if qs.n_expert == 8:
            new = T.Q8_0
        qs.i_attn_v += 1
    elif cat == "attn_k":
        if qs.n_expert == 8:
            new = T.Q8_0
    elif cat == "ffn_down":
        i_layer = _layer_of(name, qs.i_ffn_down) if qs.n_expert > 1 else qs.i_ffn_down
        n = qs.n_layer
        if ftype in ("Q4_K_M", "Q5_K_M") and use_more_bits(i_layer, n):
            new = T.Q6_K
        elif ftype == "Q4_K_S" and i_layer < n // 8:
            new = T.Q5_K
        qs.i_ffn_down += 1
    elif cat == "attn_output":
        if qs.n_expert == 8 and ftype in ("Q4_K_S", "Q4_K_M"):
            new = T.Q5_K
    return new


def fallback_type(new: T, ne0: int) -> T:
    """`tensor_type_fallback`: a smaller-block type when ``ne0`` is not a multiple of the block size."""
    if ne0 % BLOCK_LAYOUT[new][0] == 0:
        return new
    ret = _FALLBACK.get(new, new)
    if BLOCK_LAYOUT[ret][0] > 32 and ret == new:
        raise ValueError(f"no fallback type for {new.name}")
    return ret if ne0 % BLOCK_LAYOUT[ret][0] == 0 else T.F16


def tensor_type(name: str, shape: tuple[int, ...], ftype: str, qs: QuantState | None = None) -> T:
    """Type of one tensor in a file of type ``ftype``. ``qs`` carries the counters (attn_v, ffn_down)
    across calls; tensors must be visited in `layout.sort_key` order (see `plan_types`)."""
    ftype = ftype.upper()
    default = ftype_info(ftype)[1]
    src = source_type(name, shape, ftype)
    if not allows_quantization(name, shape):
        return src
    if default in FLOAT_TYPES:
        return default
    qs = qs or QuantState(n_layer=1)
    if ftype == "Q4_K_PURE":
        cat = category(name)
        if cat == "output" or (qs.tied and cat == "token_embd"):
            return fallback_type(_output_type(default, shape[-1], ftype), shape[-1])
        return fallback_type(default, shape[-1]) if shape[-2] >= 256 else T.F32
    return fallback_type(_impl(qs, default, name, shape, ftype), shape[-1])


def plan_types(tensors: Iterable[tuple[str, tuple[int, ...]]], ftype: str, *, n_layer: int,
               n_expert: int = 0, is_70b: bool = False) -> dict[str, T]:
    """Types of all tensors of a model, exactly as one `llama-quantize` run would choose them."""
    items = sorted(((n, tuple(s)) for n, s in tensors), key=lambda t: sort_key(t[0]))
    names = {n for n, _ in items}
    qs = QuantState(n_layer=n_layer, n_expert=n_expert, tied="output.weight" not in names, is_70b=is_70b)
    qs.n_attn_v = sum(1 for n, _ in items if category(n) == "attn_v")
    return {n: tensor_type(n, s, ftype, qs) for n, s in items}
