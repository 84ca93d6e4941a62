"""Tensor lists and model metadata of each architecture, as llama.cpp's loader expects them.

`tensor_specs(preset)` gives every tensor as (name, row-major shape, role) in llama.cpp's
processing order (`llama_model_loader::weight_name_comparer`: global tensors first, then by layer
number, then by name). `model_metadata(preset)` gives the `{arch}.*` keys with explicit GGUF value
types (llama.cpp is strict: u32 keys must be UINT32, floats FLOAT32, per-layer arrays INT32/BOOL).
Facts from [LCP] `src/models/*.cpp` `load_arch_hparams` / `load_arch_tensors` and the converters.
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

from zinc.gguf.constants import GGUFValueType as VT
from zinc.synth.presets import Preset

ARR_I32 = (VT.ARRAY, VT.INT32)
ARR_BOOL = (VT.ARRAY, VT.BOOL)


class TensorSpec(NamedTuple):
    """One tensor: GGUF name, row-major (numpy) shape, and a role that picks its random values."""

    name: str
    shape: tuple[int, ...]
    role: str  # embed | output | matrix | expert | router | norm | bias | ... (see weights.py)

    @property
    def n_elements(self) -> int:
        return math.prod(self.shape)


_BLK = re.compile(r"^blk\.(\d+)\.")


def sort_key(name: str) -> tuple[int, str]:
    """llama.cpp's weight_name_comparer: layer number (-1 for global tensors), then the name."""
    m = _BLK.match(name)
    return (int(m.group(1)) if m else -1, name)


# ---------------------------------------------------------------------------------------------
# tensors


def _attn(p: Preset, il: int, q_rows: int | None = None, v: bool = True, bias: bool = False) -> list:
    b = f"blk.{il}."
    d, dh, hkv = p.n_embd, p.layer_head_dim(il), p.layer_kv_heads(il)
    q = q_rows if q_rows is not None else p.n_head * dh
    out = [(b + "attn_q.weight", (q, d), "matrix"), (b + "attn_k.weight", (hkv * dh, d), "matrix")]
    if v:
        out.append((b + "attn_v.weight", (hkv * dh, d), "matrix"))
    out.append((b + "attn_output.weight", (d, p.n_head * dh), "matrix"))
    if bias:
        out += [(b + "attn_q.bias", (q,), "bias"), (b + "attn_k.bias", (hkv * dh,), "bias"),
                (b + "attn_v.bias", (hkv * dh,), "bias"), (b + "attn_output.bias", (d,), "bias")]
    return out


def _qk_norm(p: Preset, il: int) -> list:
    dh = p.layer_head_dim(il)
    return [(f"blk.{il}.attn_q_norm.weight", (dh,), "qk_norm"), (f"blk.{il}.attn_k_norm.weight", (dh,), "qk_norm")]


def _ffn(p: Preset, il: int, n_ff: int, suffix: str = "") -> list:
    b, d = f"blk.{il}.", p.n_embd
    return [(f"{b}ffn_gate{suffix}.weight", (n_ff, d), "matrix"), (f"{b}ffn_up{suffix}.weight", (n_ff, d), "matrix"),
            (f"{b}ffn_down{suffix}.weight", (d, n_ff), "matrix")]


def _experts(p: Preset, il: int, fused: bool = False) -> list:
    b, d, e, fe = f"blk.{il}.", p.n_embd, p.n_expert, p.n_ff_exp
    out = [(b + "ffn_gate_inp.weight", (e, d), "router")]
    if fused:
        out.append((b + "ffn_gate_up_exps.weight", (e, 2 * fe, d), "expert"))
    else:
        out += [(b + "ffn_gate_exps.weight", (e, fe, d), "expert"), (b + "ffn_up_exps.weight", (e, fe, d), "expert")]
    out.append((b + "ffn_down_exps.weight", (e, d, fe), "expert"))
    return out


def _layer_dense(p: Preset, il: int) -> list:
    """llama / qwen3 / qwen3moe blocks."""
    b, d = f"blk.{il}.", p.n_embd
    out = [(b + "attn_norm.weight", (d,), "norm"), (b + "ffn_norm.weight", (d,), "norm")] + _attn(p, il)
    if p.arch in ("qwen3", "qwen3moe"):
        out += _qk_norm(p, il)
    out += _experts(p, il) if p.n_expert else _ffn(p, il, p.n_ff)
    return out


def _layer_qwen35(p: Preset, il: int) -> list:
    b, d = f"blk.{il}.", p.n_embd
    out = [(b + "attn_norm.weight", (d,), "norm"), (b + "post_attention_norm.weight", (d,), "norm")]
    if p.is_recurrent(il):
        s, hk, hv = p.ssm_state, p.ssm_groups, p.ssm_v_heads
        conv = 2 * hk * s + hv * s
        out += [(b + "attn_qkv.weight", (conv, d), "matrix"), (b + "attn_gate.weight", (hv * s, d), "matrix"),
                (b + "ssm_beta.weight", (hv, d), "matrix"), (b + "ssm_alpha.weight", (hv, d), "matrix"),
                (b + "ssm_conv1d.weight", (conv, p.ssm_conv), "conv"), (b + "ssm_dt.bias", (hv,), "ssm_dt"),
                (b + "ssm_a", (hv,), "ssm_a"), (b + "ssm_norm.weight", (s,), "norm"),
                (b + "ssm_out.weight", (d, hv * s), "matrix")]
    else:
        out += _attn(p, il, q_rows=2 * p.n_head * p.head_dim) + _qk_norm(p, il)
    if p.n_expert:
        out += _experts(p, il) + [(b + "ffn_gate_inp_shexp.weight", (d,), "gate_vec")]
        out += _ffn(p, il, p.n_ff_shexp, "_shexp")
    else:
        out += _ffn(p, il, p.n_ff)
    return out


def _layer_gemma(p: Preset, il: int) -> list:
    b, d = f"blk.{il}.", p.n_embd
    v = not (p.arch == "gemma4" and p.k_eq_v and not p.is_swa(il))
    out = [(b + n, (d,), "norm") for n in ("attn_norm.weight", "post_attention_norm.weight",
                                             "ffn_norm.weight", "post_ffw_norm.weight")]
    out += _attn(p, il, v=v) + _qk_norm(p, il) + _ffn(p, il, p.n_ff)
    if p.arch == "gemma4":
        out.append((b + "layer_output_scale.weight", (1,), "scale"))
        if p.n_expert:
            out += _experts(p, il, fused=True)
            out += [(b + "ffn_gate_inp.scale", (d,), "scale"), (b + "ffn_down_exps.scale", (p.n_expert,), "scale")]
            out += [(b + n, (d,), "norm") for n in ("pre_ffw_norm_2.weight", "post_ffw_norm_1.weight",
                                                     "post_ffw_norm_2.weight")]
    return out


def _layer_gpt_oss(p: Preset, il: int) -> list:
    b, d, e, fe = f"blk.{il}.", p.n_embd, p.n_expert, p.n_ff_exp
    out = [(b + "attn_norm.weight", (d,), "norm"), (b + "post_attention_norm.weight", (d,), "norm"),
           (b + "attn_sinks.weight", (p.n_head,), "sinks")]
    out += _attn(p, il, bias=True) + _experts(p, il)
    out += [(b + "ffn_gate_inp.bias", (e,), "bias"), (b + "ffn_gate_exps.bias", (e, fe), "bias"),
            (b + "ffn_up_exps.bias", (e, fe), "bias"), (b + "ffn_down_exps.bias", (e, d), "bias")]
    return out


_LAYER = {"llama": _layer_dense, "qwen3": _layer_dense, "qwen3moe": _layer_dense, "qwen35": _layer_qwen35,
          "qwen35moe": _layer_qwen35, "gemma3": _layer_gemma, "gemma4": _layer_gemma, "gpt-oss": _layer_gpt_oss}


def tensor_specs(p: Preset) -> list[TensorSpec]:
    """All tensors of the model, sorted the way llama.cpp processes (and llama-quantize writes) them."""
    if p.arch not in _LAYER:
        raise ValueError(f"preset {p.name}: unsupported architecture {p.arch!r}")
    d, v = p.n_embd, p.n_vocab
    out = [("token_embd.weight", (v, d), "embed"), ("output_norm.weight", (d,), "norm")]
    if not p.tied:
        out.append(("output.weight", (v, d), "output"))
    if p.llama3_rope:
        out.append(("rope_freqs.weight", (p.rot // 2,), "rope_freqs"))
    if p.arch == "gemma4" and any(not p.is_swa(i) for i in range(p.n_layer)):
        out.append(("rope_freqs.weight", (p.head_dim // 2,), "rope_freqs"))
    for il in range(p.n_layer):
        out += _LAYER[p.arch](p, il)
    specs = [TensorSpec(n, tuple(int(x) for x in s), r) for n, s, r in out]
    return sorted(specs, key=lambda t: sort_key(t.name))


def n_params(p: Preset) -> int:
    """Parameter count of the preset (every tensor element, tied output counted once)."""
    return sum(t.n_elements for t in tensor_specs(p))


# ---------------------------------------------------------------------------------------------
# metadata


def rope_freqs_values(p: Preset) -> list[float]:
    """Content of `rope_freqs.weight`: Llama 3.1 scaling factors, or Gemma 4 proportional rope."""
    if p.arch == "gemma4":
        n_rot = int(p.head_dim * p.rope_partial / 2)
        return [1.0] * n_rot + [1e30] * (p.head_dim // 2 - n_rot)
    factor, low, high, old_ctx = p.llama3_rope
    out = []
    for i in range(0, p.rot, 2):
        freq = 1.0 / (p.rope_base ** (i / p.rot))
        wavelen = 2 * math.pi / freq
        if wavelen < old_ctx / high:
            out.append(1.0)
        elif wavelen > old_ctx / low:
            out.append(factor)
        else:
            s = (old_ctx / wavelen - low) / (high - low)
            out.append(1.0 / ((1 - s) / factor + s))
    return out


def _per_layer(values: list[int]) -> tuple[object, object]:
    """A scalar UINT32 when all layers agree, else an INT32 array (what the converter writes)."""
    if len(set(values)) == 1:
        return values[0], VT.UINT32
    return values, ARR_I32


def _common_keys(p: Preset) -> dict[str, tuple[object, object]]:
    a = p.arch
    kv: dict[str, tuple[object, object]] = {
        f"{a}.context_length": (p.n_ctx, VT.UINT32),
        f"{a}.embedding_length": (p.n_embd, VT.UINT32),
        f"{a}.block_count": (p.n_layer, VT.UINT32),
        f"{a}.attention.head_count": (p.n_head, VT.UINT32),
        f"{a}.attention.head_count_kv": _per_layer([p.layer_kv_heads(i) for i in range(p.n_layer)]),
        f"{a}.attention.key_length": (p.head_dim, VT.UINT32),
        f"{a}.attention.value_length": (p.head_dim, VT.UINT32),
        f"{a}.rope.freq_base": (float(p.rope_base), VT.FLOAT32),
        f"{a}.attention.layer_norm_rms_epsilon": (float(p.eps), VT.FLOAT32),
    }
    if a != "gemma3":  # the Gemma 3 converter leaves it to default to the head dim
        kv[f"{a}.rope.dimension_count"] = (p.rot, VT.UINT32)
    if p.n_ff:
        kv[f"{a}.feed_forward_length"] = (p.n_ff, VT.UINT32)
    if p.n_expert:
        kv[f"{a}.expert_count"] = (p.n_expert, VT.UINT32)
        kv[f"{a}.expert_used_count"] = (p.n_expert_used, VT.UINT32)
        kv[f"{a}.expert_feed_forward_length"] = (p.n_ff_exp, VT.UINT32)
    if p.n_ff_shexp:
        kv[f"{a}.expert_shared_feed_forward_length"] = (p.n_ff_shexp, VT.UINT32)
    return kv


def _arch_keys(p: Preset) -> dict[str, tuple[object, object]]:
    a, kv = p.arch, {}
    if a == "llama":
        kv[f"{a}.vocab_size"] = (p.n_vocab, VT.UINT32)
    if a in ("qwen35", "qwen35moe"):
        s, hv = p.ssm_state, p.ssm_v_heads
        kv.update({f"{a}.ssm.conv_kernel": (p.ssm_conv, VT.UINT32), f"{a}.ssm.state_size": (s, VT.UINT32),
                   f"{a}.ssm.group_count": (p.ssm_groups, VT.UINT32), f"{a}.ssm.time_step_rank": (hv, VT.UINT32),
                   f"{a}.ssm.inner_size": (s * hv, VT.UINT32),
                   f"{a}.full_attention_interval": (p.full_attn_interval, VT.UINT32),
                   f"{a}.attention.recurrent_layers": ([p.is_recurrent(i) for i in range(p.n_layer)], ARR_BOOL),
                   f"{a}.rope.dimension_sections": (list(p.rope_sections), ARR_I32)})
    if a in ("gemma3", "gemma4", "gpt-oss"):
        kv[f"{a}.attention.sliding_window"] = (p.n_swa, VT.UINT32)
    if a == "gemma4" or (a == "gemma3" and p.rope_base_swa != 10000.0):  # gemma3 default: 10000
        kv[f"{a}.rope.freq_base_swa"] = (float(p.rope_base_swa), VT.FLOAT32)
    if p.softcap:
        kv[f"{a}.final_logit_softcapping"] = (float(p.softcap), VT.FLOAT32)
    if a == "gemma3" and p.swa_period != 6:
        kv[f"{a}.attention.sliding_window_pattern"] = (p.swa_period, VT.UINT32)
    if a == "gemma4":
        kv.update({f"{a}.attention.sliding_window_pattern": ([p.is_swa(i) for i in range(p.n_layer)], ARR_BOOL),
                   f"{a}.attention.shared_kv_layers": (0, VT.UINT32),
                   f"{a}.embedding_length_per_layer_input": (0, VT.UINT32),
                   f"{a}.attention.key_length_swa": (p.head_dim_swa, VT.UINT32),
                   f"{a}.attention.value_length_swa": (p.head_dim_swa, VT.UINT32),
                   f"{a}.rope.dimension_count_swa": (p.n_rot_swa or p.head_dim_swa, VT.UINT32)})
    if p.yarn:
        kv.update({f"{a}.rope.scaling.type": ("yarn", VT.STRING),
                   f"{a}.rope.scaling.factor": (float(p.yarn[0]), VT.FLOAT32),
                   f"{a}.rope.scaling.original_context_length": (int(p.yarn[1]), VT.UINT32)})
    return kv


def model_metadata(p: Preset) -> dict[str, tuple[object, object]]:
    """`{arch}.*` keys of the preset: key → (value, GGUF value type descriptor)."""
    kv = _common_keys(p)
    kv.update(_arch_keys(p))
    return kv
