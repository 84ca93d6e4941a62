"""`llama` (Llama 2/3.x, dense or Mixtral-style MoE): spec arch-llama.md.

NORM (adjacent-pair) rope over the whole head, with the optional global `rope_freqs.weight`
(Llama 3.1+ frequency factors); no q/k norm, no embedding scale, no softcap; SwiGLU FFN, or routed
experts with softmax gating and renormalised weights when `llama.expert_count` > 0.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from zinc.backends.base import Ops
from zinc.engine.cache import KVCache
from zinc.errors import UnsupportedModelError
from zinc.models.base import Batch, Config, TensorSpec, Weights, common_config
from zinc.models.layers import (attention_cache_layout, attention_tensors, embed_tokens, ffn_tensors,
                                global_tensors, glu_ffn, lm_head, residual_norm, moe_ffn, moe_tensors, self_attention)

cache_layout = attention_cache_layout


def config(gguf: Any) -> Config:
    cfg = common_config(gguf, "llama", rope_mode="norm")
    if cfg.rope.n_dims != cfg.head_dim:
        raise UnsupportedModelError(f"{gguf.path}: llama.rope.dimension_count={cfg.rope.n_dims} must equal "
                                    f"the head dim {cfg.head_dim} (llama.cpp: invalid n_rot)")
    if cfg.n_expert:
        return replace(cfg, n_ff_exp=cfg.n_ff, expert_norm_w=True)  # expert_weights_scale is not read
    return cfg


def tensors(cfg: Config) -> list[TensorSpec]:
    specs = global_tensors(cfg)
    specs.append(TensorSpec("rope_freqs.weight", (cfg.rope.n_dims // 2,), "vector", required=False))
    for il in range(cfg.n_layer):
        specs += attention_tensors(cfg, il)
        specs += moe_tensors(cfg, il) if cfg.n_expert else ffn_tensors(cfg, il)
    return specs


def forward(ops: Ops, cfg: Config, w: Weights, batch: Batch, cache: KVCache) -> Any:
    """Logits (T, n_vocab) — or (1, n_vocab) with batch.last_only — for one step."""
    x = embed_tokens(ops, cfg, w, batch)
    freqs = w.get("rope_freqs.weight")
    h = ops.rms_norm(x, w.layer(0)["attn_norm"], cfg.norm_eps)
    for il in range(cfg.n_layer):
        lw = w.layer(il)
        a = self_attention(ops, cfg, lw, h, batch, cache, freqs)
        x, h = ops.add_rms_norm(a, x, lw["ffn_norm"], cfg.norm_eps)
        f = moe_ffn(ops, cfg, lw, h) if cfg.n_expert else glu_ffn(ops, cfg, lw, h)
        x, h = residual_norm(ops, cfg, w, il, f, x)
    return lm_head(ops, cfg, w, h, batch, normed=True)
