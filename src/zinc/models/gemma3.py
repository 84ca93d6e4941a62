"""`gemma3`: spec arch-gemma3.md.

Embeddings scaled by sqrtf(n_embd); every norm is a plain RMS norm (the converter stored 1 + w);
q/k norm, NEOX rope with base `rope.freq_base_swa` (default 10000, scale 1) on sliding layers and
`rope.freq_base` (with the file's scaling) on global ones; the query is pre-scaled by
f_attention_scale and the attention itself uses scale 1; post-attention and post-FFN norms; GeGLU;
optional final logit softcap. Layer i slides iff i % n < n - 1 (n from
`attention.sliding_window_pattern`, default 6), or per the bool array of that key.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from zinc.backends.base import Ops
from zinc.engine.cache import KVCache
from zinc.models.base import Batch, Config, Meta, TensorSpec, Weights, common_config, swa_pattern
from zinc.models.layers import (attention_cache_layout, attention_tensors, embed_tokens, ffn_tensors,
                                global_tensors, glu_ffn, lm_head, self_attention)

cache_layout = attention_cache_layout
F32 = np.float32


def config(gguf: Any) -> Config:
    m = Meta(gguf, "gemma3")
    cfg = common_config(gguf, "gemma3", rope_mode="neox", qk_norm=True, post_norms=True, act="gelu",
                        kq_scale=1.0, embed_scale=float(np.sqrt(F32(int(m.get("embedding_length"))))),
                        final_softcap=float(m.get("final_logit_softcapping", 0.0)))
    n_swa = int(m.get("attention.sliding_window", 0))
    swa = swa_pattern(m, cfg.n_layer) if n_swa > 0 else ()
    n_rot_swa = int(m.get("rope.dimension_count_swa", cfg.rope.n_dims))
    n_rot = n_rot_swa if swa and swa[0] else cfg.rope.n_dims  # the graph uses hparams.n_rot(0) everywhere
    rope = replace(cfg.rope, n_dims=n_rot)
    rope_swa = replace(rope, freq_base=float(m.get("rope.freq_base_swa", 10000.0)), freq_scale=1.0)
    if cfg.n_layer == 62:  # Gemma 3 27B scales queries by 1/sqrt(n_embd / n_head)
        q_scale = F32(1) / np.sqrt(F32(cfg.n_embd // cfg.n_head))
    else:
        q_scale = F32(1) / np.sqrt(F32(cfg.head_dim))
    return replace(cfg, n_swa=n_swa if swa else 0, swa_layers=swa, rope=rope, rope_swa=rope_swa,
                   q_scale=float(q_scale))


def tensors(cfg: Config) -> list[TensorSpec]:
    specs = global_tensors(cfg)
    for il in range(cfg.n_layer):
        specs += attention_tensors(cfg, il, qk_norm=True, post_norm=True)
        specs += ffn_tensors(cfg, il, post_norm=True)
    return specs


def forward(ops: Ops, cfg: Config, w: Weights, batch: Batch, cache: KVCache) -> Any:
    """Logits (T, n_vocab) — or (1, n_vocab) with batch.last_only — for one step."""
    x = embed_tokens(ops, cfg, w, batch)
    for il in range(cfg.n_layer):
        lw = w.layer(il)
        h = ops.rms_norm(x, lw["attn_norm"], cfg.norm_eps)
        a = self_attention(ops, cfg, lw, h, batch, cache)
        a = ops.rms_norm(a, lw["post_attention_norm"], cfg.norm_eps)
        x, h = ops.add_rms_norm(a, x, lw["ffn_norm"], cfg.norm_eps)
        f = ops.rms_norm(glu_ffn(ops, cfg, lw, h), lw["post_ffw_norm"], cfg.norm_eps)
        x = ops.add(f, x)
    return lm_head(ops, cfg, w, x, batch)
