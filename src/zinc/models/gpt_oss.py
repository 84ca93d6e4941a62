"""`gpt-oss` (OpenAI gpt-oss-20b / -120b): spec arch-gpt-oss.md.

Attention with q/k/v/o biases and per-head sinks (learned logits that join the softmax normaliser),
NEOX rope with YaRN scaling on every layer, sliding-window layers by `load_swa_pattern(2)` (even
layers slide by default); the head dim is `rope.dimension_count`. The FFN is routed experts only:
router with bias, top-k on the raw logits then a softmax over the winners, experts with biases and
the clamped SwiGLU (`swiglu_oai`), no renormalisation, no shared expert. Untied output.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from zinc.backends.base import Ops
from zinc.engine.cache import KVCache
from zinc.errors import UnsupportedModelError
from zinc.models.base import Batch, Config, Meta, TensorSpec, Weights, common_config, swa_pattern
from zinc.models.layers import (attention_tensors, cache_layout, embed_tokens, global_tensors, lm_head, moe_ffn,
                                moe_tensors, residual_norm, self_attention)

__all__ = ["config", "tensors", "cache_layout", "forward"]


def config(gguf: Any) -> Config:
    m = Meta(gguf, "gpt-oss")
    cfg = common_config(gguf, "gpt-oss", rope_mode="neox", act="swiglu_oai")
    head_dim = cfg.rope.n_dims  # the graph uses n_rot as the head dim everywhere
    n_swa = int(m.get("attention.sliding_window"))
    n_ff_exp = int(m.uniform("expert_feed_forward_length"))
    if not cfg.n_expert or not cfg.n_expert_used:
        raise UnsupportedModelError(f"{gguf.path}: gpt-oss needs expert_count and expert_used_count > 0")
    rope_swa = replace(cfg.rope, freq_base=float(m.get("rope.freq_base_swa", cfg.rope.freq_base)))
    return replace(cfg, head_dim=head_dim, head_dim_v=head_dim, n_swa=n_swa,
                   swa_layers=swa_pattern(m, cfg.n_layer, default=2), rope_swa=rope_swa,
                   kq_scale=float(np.float32(1) / np.sqrt(np.float32(head_dim))), n_ff_exp=n_ff_exp,
                   expert_gating="softmax_weight", expert_norm_w=False, expert_w_scale=0.0)


def tensors(cfg: Config) -> list[TensorSpec]:
    specs = global_tensors(cfg, tied_ok=False)
    for il in range(cfg.n_layer):
        specs += attention_tensors(cfg, il, post_norm=True)
        specs.append(TensorSpec(f"blk.{il}.attn_sinks.weight", (cfg.n_head,), "vector"))
        specs += moe_tensors(cfg, il, norm="", biases=True)
    return specs


def forward(ops: Ops, cfg: Config, w: Weights, batch: Batch, cache: KVCache) -> Any:
    """Logits (T, n_vocab) — or (1, n_vocab) with batch.last_only — for one step."""
    x = embed_tokens(ops, cfg, w, batch)
    h = ops.rms_norm(x, w.layer(0)["attn_norm"], cfg.norm_eps)
    for il in range(cfg.n_layer):
        lw = w.layer(il)
        a = self_attention(ops, cfg, lw, h, batch, cache)
        x, h = ops.add_rms_norm(a, x, lw["post_attention_norm"], cfg.norm_eps)
        x, h = residual_norm(ops, cfg, w, il, moe_ffn(ops, cfg, lw, h), x)
    return lm_head(ops, cfg, w, h, batch, normed=True)
