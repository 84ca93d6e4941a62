"""`qwen3` (dense) and `qwen3moe`: spec arch-qwen3.md.

Per-head RMS norm of q and k before NEOX rope over the whole head dim; SwiGLU FFN (qwen3) or routed
experts (qwen3moe: softmax gating, top `expert_used_count`, weights always renormalised, no
shared expert, no scaling).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from zinc.backends.base import Ops
from zinc.engine.cache import KVCache
from zinc.errors import UnsupportedModelError
from zinc.models.base import Batch, Config, Meta, TensorSpec, Weights, common_config
from zinc.models.layers import (attention_cache_layout, attention_tensors, embed_tokens, ffn_tensors,
                                global_tensors, glu_ffn, lm_head, residual_norm, moe_ffn, moe_tensors, self_attention)

cache_layout = attention_cache_layout


def config(gguf: Any) -> Config:
    arch = gguf.architecture
    m = Meta(gguf, arch)
    cfg = common_config(gguf, arch, rope_mode="neox", qk_norm=True)
    if arch != "qwen3moe":
        return cfg
    if not cfg.n_expert or not cfg.n_expert_used:
        raise UnsupportedModelError(f"{gguf.path}: qwen3moe needs {arch}.expert_count and "
                                    f"{arch}.expert_used_count > 0")
    n_ff_exp = int(m.uniform("expert_feed_forward_length", 0)) or cfg.n_ff // cfg.n_expert_used
    return replace(cfg, n_ff_exp=n_ff_exp, expert_gating="softmax", expert_norm_w=True)


def tensors(cfg: Config) -> list[TensorSpec]:
    specs = global_tensors(cfg)
    for il in range(cfg.n_layer):
        specs += attention_tensors(cfg, il, qk_norm=True)
        specs += moe_tensors(cfg, il) if cfg.n_expert else ffn_tensors(cfg, il)
    return specs


def forward(ops: Ops, cfg: Config, w: Weights, batch: Batch, cache: KVCache) -> Any:
    """Logits (T, n_vocab) — or (1, n_vocab) with batch.last_only — for one step."""
    x = embed_tokens(ops, cfg, w, batch)
    h = ops.rms_norm(x, w.layer(0)["attn_norm"], cfg.norm_eps)
    for il in range(cfg.n_layer):
        lw = w.layer(il)
        a = self_attention(ops, cfg, lw, h, batch, cache)
        x, h = ops.add_rms_norm(a, x, lw["ffn_norm"], cfg.norm_eps)
        f = moe_ffn(ops, cfg, lw, h) if cfg.n_expert else glu_ffn(ops, cfg, lw, h)
        x, h = residual_norm(ops, cfg, w, il, f, x)
    return lm_head(ops, cfg, w, h, batch, normed=True)
