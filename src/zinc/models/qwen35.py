"""`qwen35` (Qwen3.5/3.6 dense) and `qwen35moe`: spec arch-qwen35.md.

A hybrid decoder: Gated DeltaNet layers (linear attention with a conv window and a per-head state
in the cache) and, every `full_attention_interval`-th layer or per `attention.recurrent_layers`,
gated full attention (q rows `[q_h, gate_h]` per head, q/k norm, IMROPE over the first `n_rot`
dims, output times sigmoid(gate)). Every norm is a plain RMS norm (the converter stored 1 + w,
except the DeltaNet gated norm); `post_attention_norm` is the pre-FFN norm. FFN: SwiGLU
(qwen35) or softmax-routed experts with renormalised weights plus a sigmoid-gated shared expert
(qwen35moe). MTP blocks (`nextn_predict_layers`) are not run.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from zinc.backends.base import Ops
from zinc.engine.cache import KVCache
from zinc.errors import UnsupportedModelError
from zinc.models.base import Batch, Config, Meta, TensorSpec, Weights, common_config
from zinc.models.layers import (attention_tensors, cache_layout, delta_net_tensors, embed_tokens, ffn_tensors,
                                gated_delta_net, global_tensors, glu_ffn, lm_head, residual_norm, moe_ffn, moe_tensors,
                                projections, self_attention, shared_expert_tensors)

__all__ = ["config", "tensors", "cache_layout", "forward"]


def _recurrent_layers(m: Meta, n_layer: int) -> tuple[bool, ...]:
    """`attention.recurrent_layers` if present, else every `full_attention_interval`-th layer attends."""
    arr = m.get("attention.recurrent_layers", None)
    if arr is not None:
        return tuple(bool(x) for x in np.asarray(arr).reshape(-1)[:n_layer])
    n = int(m.get("full_attention_interval", 4))
    return tuple((il + 1) % n != 0 for il in range(n_layer))


def config(gguf: Any) -> Config:
    arch = gguf.architecture
    m = Meta(gguf, arch)
    cfg = common_config(gguf, arch, rope_mode="imrope", qk_norm=True, attn_gate=True)
    if cfg.head_dim != cfg.head_dim_v:
        raise UnsupportedModelError(f"{gguf.path}: {arch} needs attention.key_length == value_length "
                                    f"({cfg.head_dim} != {cfg.head_dim_v})")
    sections = tuple(int(x) for x in np.asarray(m.get("rope.dimension_sections")).reshape(-1)[:4])
    S, Hk, Hv = int(m.get("ssm.state_size")), int(m.get("ssm.group_count")), int(m.get("ssm.time_step_rank"))
    if int(m.get("ssm.inner_size")) != Hv * S or Hk <= 0 or Hv % Hk:
        raise UnsupportedModelError(f"{gguf.path}: {arch} needs ssm.inner_size = time_step_rank x state_size "
                                    f"and time_step_rank a multiple of group_count (S={S}, Hk={Hk}, Hv={Hv})")
    cfg = replace(cfg, rope=replace(cfg.rope, sections=sections), rope_swa=replace(cfg.rope, sections=sections),
                  recurrent_layers=_recurrent_layers(m, cfg.n_layer), ssm_conv_kernel=int(m.get("ssm.conv_kernel")),
                  ssm_state=S, ssm_k_heads=Hk, ssm_v_heads=Hv)
    if arch != "qwen35moe":
        return cfg
    if not cfg.n_expert or not cfg.n_expert_used:
        raise UnsupportedModelError(f"{gguf.path}: {arch} needs expert_count and expert_used_count > 0")
    n_ff_exp = int(m.uniform("expert_feed_forward_length", 0)) or cfg.n_ff // cfg.n_expert_used
    n_ff_shexp = int(m.get("expert_shared_feed_forward_length", 0)) or cfg.n_ff
    return replace(cfg, n_ff_exp=n_ff_exp, n_ff_shexp=n_ff_shexp, expert_gating="softmax", expert_norm_w=True)


def tensors(cfg: Config) -> list[TensorSpec]:
    specs = global_tensors(cfg)
    for il in range(cfg.n_layer):
        if cfg.is_recurrent(il):
            D = cfg.n_embd
            specs += [TensorSpec(f"blk.{il}.attn_norm.weight", (D,), "vector"),
                      TensorSpec(f"blk.{il}.post_attention_norm.weight", (D,), "vector")]
            specs += delta_net_tensors(cfg, il)
        else:
            specs += attention_tensors(cfg, il, qk_norm=True, post_norm=True)
        if cfg.n_expert:
            specs += moe_tensors(cfg, il, norm="")
            specs += [replace(s, required=False) for s in shared_expert_tensors(cfg, il)]
        else:
            specs += ffn_tensors(cfg, il, norm="")
    return specs


def _ffn(ops: Ops, cfg: Config, w: Weights, il: int, h: Any, T: int) -> Any:
    lw = w.layer(il)
    if not cfg.n_expert:
        return glu_ffn(ops, cfg, lw, h)
    if not lw.has("ffn_up_shexp"):
        return moe_ffn(ops, cfg, lw, h)
    logits, gate = projections(ops, lw, h, ("ffn_gate_inp", "ffn_gate_inp_shexp"))  # one matmul where stacked
    if lw.shared_expert_folded() and T <= getattr(ops, "fold_shared_experts", 0):  # the stacks' last expert
        return moe_ffn(ops, cfg, lw, h, logits, shared_gate=gate, folded=True)
    return moe_ffn(ops, cfg, lw, h, logits, shared=glu_ffn(ops, cfg, lw, h, "_shexp"), shared_gate=gate)


def forward(ops: Ops, cfg: Config, w: Weights, batch: Batch, cache: KVCache) -> Any:
    """Logits (T, n_vocab) — or (1, n_vocab) with batch.last_only — for one step."""
    x = embed_tokens(ops, cfg, w, batch)
    h = ops.rms_norm(x, w.layer(0)["attn_norm"], cfg.norm_eps)
    for il in range(cfg.n_layer):
        lw = w.layer(il)
        mixer = gated_delta_net if cfg.is_recurrent(il) else self_attention
        a = mixer(ops, cfg, lw, h, batch, cache)
        x, h = ops.add_rms_norm(a, x, lw["post_attention_norm"], cfg.norm_eps)
        x, h = residual_norm(ops, cfg, w, il, _ffn(ops, cfg, w, il, h, batch.n), x)
    return lm_head(ops, cfg, w, h, batch, normed=True)
