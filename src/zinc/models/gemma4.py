"""`gemma4` (dense 31B, MoE 26B-A4B, per-layer-embedding E2B/E4B): spec arch-gemma4.md.

Embeddings scaled by sqrtf(n_embd); norm weights stored raw (plain RMS norms). Sliding layers
(`attention.sliding_window_pattern`, a bool per layer) and global layers differ in head dim
(`key_length_swa` / `key_length`), KV heads (`head_count_kv` per layer) and rope: NEOX over
`rope.dimension_count_swa` dims with `rope.freq_base_swa` (default 10000) and scale 1, or over the
whole global head with the file's base and scaling and the proportional-rope factors of
`rope_freqs.weight`. Per head: weighted q/k norms and an unweighted V norm; V is the raw K
projection where `attn_v` is absent; attention scale 1. The last `attention.shared_kv_layers`
layers compute only Q and read an earlier layer's cache. FFN: GeGLU with post norms; MoE layers
(those with a router) add a routed-expert branch (its own norms, router input rmsnorm(x)/sqrt(D)
times `ffn_gate_inp.scale`, per-expert output scales). Optional per-layer embeddings (PLE), a
per-layer output scalar, final logit softcap.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from zinc.backends.base import Ops
from zinc.engine.cache import KVCache
from zinc.errors import UnsupportedModelError
from zinc.models.base import (Batch, Config, Meta, TensorSpec, Weights, common_config, rope_params,
                              swa_pattern)
from zinc.models.layers import (attention_tensors, cache_layout, embed_tokens, ffn_tensors, global_tensors,
                                glu_ffn, lm_head, moe_ffn, moe_tensors, self_attention)

__all__ = ["config", "tensors", "cache_layout", "forward"]
F32 = np.float32


def _kv_sources(m: Meta, swa: tuple[bool, ...], n_layer: int) -> tuple[int, ...]:
    """Shared-KV layers l >= n_kv read layer n_kv - 2 (sliding) or n_kv - 1 (global); llama.cpp's rule."""
    shared = int(m.get("attention.shared_kv_layers", 0))
    if shared <= 0:
        return ()
    n_kv = int(m.get("block_count")) - shared
    if n_kv < 2:
        raise UnsupportedModelError(f"{m.gguf.path}: gemma4 needs at least 2 layers with their own KV cache")
    return tuple(il if il < n_kv else n_kv - (2 if swa[il] else 1) for il in range(n_layer))


def config(gguf: Any) -> Config:
    m = Meta(gguf, "gemma4")
    D = int(m.get("embedding_length"))
    n_layer = int(m.get("block_count")) - int(m.get("nextn_predict_layers", 0))
    swa = swa_pattern(m, n_layer)
    Dg, Ds = int(m.get("attention.key_length")), int(m.get("attention.key_length_swa"))
    if Dg != int(m.get("attention.value_length", Dg)) or Ds != int(m.get("attention.value_length_swa")):
        raise UnsupportedModelError(f"{gguf.path}: gemma4 needs key_length == value_length (global and swa)")
    n_head = int(m.uniform("attention.head_count"))
    hkv = m.per_layer("attention.head_count_kv", n_layer, n_head)
    n_ff = m.per_layer("feed_forward_length", n_layer)
    rope = rope_params(m, Dg, mode="neox")
    rope_swa = replace(rope, n_dims=int(m.get("rope.dimension_count_swa", rope.n_dims)),
                       freq_base=float(m.get("rope.freq_base_swa", 10000.0)), freq_scale=1.0)
    moe = tuple(f"blk.{il}.ffn_gate_inp.weight" in gguf.tensors for il in range(n_layer))
    cfg = common_config(gguf, "gemma4", rope_mode="neox", qk_norm=True, post_norms=True, act="gelu", v_norm=True,
                        kq_scale=1.0, embed_scale=float(np.sqrt(F32(D))), n_head_kv=max(hkv), n_ff=max(n_ff),
                        head_dim=Dg, head_dim_v=Dg, final_softcap=float(m.get("final_logit_softcapping", 0.0)),
                        n_swa=int(m.get("attention.sliding_window")), swa_layers=swa, rope=rope, rope_swa=rope_swa,
                        layer_head_dim=tuple(Ds if s else Dg for s in swa), layer_n_head_kv=hkv, layer_n_ff=n_ff,
                        kv_source=_kv_sources(m, swa, n_layer),
                        n_embd_per_layer=int(m.get("embedding_length_per_layer_input")))
    if any(moe):
        if not cfg.n_expert or not cfg.n_expert_used:
            raise UnsupportedModelError(f"{gguf.path}: gemma4 MoE layers need expert_count and expert_used_count")
        cfg = replace(cfg, moe_layers=moe, n_ff_exp=int(m.uniform("expert_feed_forward_length")),
                      expert_gating="softmax", expert_norm_w=True, expert_w_scale=1.0)
    return cfg


def tensors(cfg: Config) -> list[TensorSpec]:
    D, V, L, Dp = cfg.n_embd, cfg.n_vocab, cfg.n_layer, cfg.n_embd_per_layer
    specs = global_tensors(cfg)
    if not all(cfg.swa_layers):
        specs.append(TensorSpec("rope_freqs.weight", (cfg.head_dim // 2,), "vector"))
    if Dp:
        specs += [TensorSpec("per_layer_token_embd.weight", (V, Dp * L), "embed"),
                  TensorSpec("per_layer_model_proj.weight", (Dp * L, D)),
                  TensorSpec("per_layer_proj_norm.weight", (Dp,), "vector")]
    for il in range(L):
        p = f"blk.{il}."
        specs += attention_tensors(cfg, il, qk_norm=True, post_norm=True, v_optional=True)
        specs += ffn_tensors(cfg, il, post_norm=True, n_ff=cfg.n_ff_of(il))
        specs.append(TensorSpec(p + "layer_output_scale.weight", (1,), "vector", required=False))
        if cfg.is_moe(il):
            specs += moe_tensors(cfg, il, norm="pre_ffw_norm_2")
            specs += [TensorSpec(p + "ffn_gate_inp.scale", (D,), "vector"),
                      TensorSpec(p + "post_ffw_norm_1.weight", (D,), "vector"),
                      TensorSpec(p + "post_ffw_norm_2.weight", (D,), "vector")]
        if Dp:
            specs += [TensorSpec(p + "inp_gate.weight", (Dp, D)), TensorSpec(p + "proj.weight", (D, Dp)),
                      TensorSpec(p + "post_norm.weight", (D,), "vector")]
    return specs


def per_layer_inputs(ops: Ops, cfg: Config, w: Weights, batch: Batch, x: Any) -> list[Any]:
    """PLE (spec §3.5): one (T, Dp) input per layer from the token rows and a projection of x."""
    T, L, Dp = batch.n, cfg.n_layer, cfg.n_embd_per_layer
    pe = ops.scale(ops.embed(w["per_layer_token_embd.weight"], batch.tokens), float(np.sqrt(F32(Dp))))
    pr = ops.scale(ops.matmul(x, w["per_layer_model_proj.weight"]), float(F32(1) / np.sqrt(F32(cfg.n_embd))))
    pr = ops.rms_norm(ops.reshape(pr, (T, L, Dp)), w["per_layer_proj_norm.weight"], cfg.norm_eps)
    p = ops.scale(ops.add(pr, ops.reshape(pe, (T, L, Dp))), float(F32(1) / np.sqrt(F32(2))))
    return ops.split(ops.reshape(p, (T, L * Dp)), [Dp] * L)


def _ffn(ops: Ops, cfg: Config, lw: Any, x: Any) -> Any:
    """The FFN block on the attention output x, post-FFN norm included (dense, or dense + experts)."""
    eps = cfg.norm_eps
    f = glu_ffn(ops, cfg, lw, ops.rms_norm(x, lw["ffn_norm"], eps))
    if cfg.is_moe(lw.il):
        f = ops.rms_norm(f, lw["post_ffw_norm_1"], eps)
        r = ops.scale(ops.rms_norm(x, None, eps), float(F32(1) / np.sqrt(F32(cfg.n_embd))))
        logits = ops.matmul(ops.mul(r, lw.get("ffn_gate_inp", "scale")), lw["ffn_gate_inp"])
        e = moe_ffn(ops, cfg, lw, ops.rms_norm(x, lw["pre_ffw_norm_2"], eps), logits)
        f = ops.add(f, ops.rms_norm(e, lw["post_ffw_norm_2"], eps))
    return ops.rms_norm(f, lw["post_ffw_norm"], eps)


def forward(ops: Ops, cfg: Config, w: Weights, batch: Batch, cache: KVCache) -> Any:
    """Logits (T, n_vocab) — or (1, n_vocab) with batch.last_only — for one step."""
    x = embed_tokens(ops, cfg, w, batch)
    ple = per_layer_inputs(ops, cfg, w, batch, x) if cfg.n_embd_per_layer else None
    freqs = w.get("rope_freqs.weight")
    for il in range(cfg.n_layer):
        lw = w.layer(il)
        h = ops.rms_norm(x, lw["attn_norm"], cfg.norm_eps)
        a = self_attention(ops, cfg, lw, h, batch, cache, None if cfg.is_swa(il) else freqs)
        x = ops.add(ops.rms_norm(a, lw["post_attention_norm"], cfg.norm_eps), x)
        x = ops.add(_ffn(ops, cfg, lw, x), x)
        if ple is not None:
            g = ops.mul(ops.unary(ops.matmul(x, lw["inp_gate"]), "gelu"), ple[il])
            x = ops.add(x, ops.rms_norm(ops.matmul(g, lw["proj"]), lw["post_norm"], cfg.norm_eps))
        if lw.has("layer_output_scale"):
            x = ops.mul(x, lw["layer_output_scale"])
    return lm_head(ops, cfg, w, x, batch)
