"""Building blocks shared by the architectures, written against `Ops` only.

Each block reads its quirks from `Config` fields (q/k norm, query pre-scale, window, activation,
expert gating) and optional tensors from the weights (biases, fused `attn_qkv`), never from the
architecture name. The tensor-spec helpers list what each block reads, for `load_weights`.
"""

from __future__ import annotations

from typing import Any

from zinc.backends.base import Ops
from zinc.engine.cache import LayerCacheSpec
from zinc.models.base import Batch, Config, LayerWeights, TensorSpec, Weights


def _linear(ops: Ops, x: Any, lw: LayerWeights, short: str) -> Any:
    """x @ W.T (+ bias when the file has one)."""
    y = ops.matmul(x, lw[short])
    b = lw.get(short, "bias")
    return y if b is None else ops.add(y, b)


def qkv_projections(ops: Ops, cfg: Config, lw: LayerWeights, h: Any, T: int) -> tuple[Any, Any, Any]:
    """Q (T, Hq, Dh), K (T, Hkv, Dh), V (T, Hkv, Dv) from separate or fused (attn_qkv) weights."""
    nq, nk, nv = cfg.n_head * cfg.head_dim, cfg.n_head_kv * cfg.head_dim, cfg.n_head_kv * cfg.head_dim_v
    if lw.has("attn_qkv"):
        q, k, v = ops.split(_linear(ops, h, lw, "attn_qkv"), (nq, nk, nv))
    else:
        q, k, v = (_linear(ops, h, lw, s) for s in ("attn_q", "attn_k", "attn_v"))
    return (ops.reshape(q, (T, cfg.n_head, cfg.head_dim)), ops.reshape(k, (T, cfg.n_head_kv, cfg.head_dim)),
            ops.reshape(v, (T, cfg.n_head_kv, cfg.head_dim_v)))


def self_attention(ops: Ops, cfg: Config, lw: LayerWeights, h: Any, batch: Batch, kv: Any,
                   rope_freqs: Any = None) -> Any:
    """Projections, optional q/k norm, rope, KV-cache write, attention and output projection."""
    T, il = batch.n, lw.il
    q, k, v = qkv_projections(ops, cfg, lw, h, T)
    if cfg.qk_norm:
        q = ops.rms_norm(q, lw["attn_q_norm"], cfg.norm_eps)
        k = ops.rms_norm(k, lw["attn_k_norm"], cfg.norm_eps)
    rp = cfg.rope_for(il)
    q = ops.rope(q, batch.pos, rp, rope_freqs)
    if cfg.q_scale != 1.0:
        q = ops.scale(q, cfg.q_scale)
    ops.rope_kv_write(k, v, batch.pos, rp, rope_freqs, kv.k, kv.v, kv.pos, kv.slots)
    a = ops.attention(q, kv.k, kv.v, batch.pos, kv.pos, kv.n_kv, cfg.kq_scale, window=cfg.window(il),
                      sinks=lw.get("attn_sinks"))
    return _linear(ops, ops.reshape(a, (T, cfg.n_head * cfg.head_dim_v)), lw, "attn_output")


def glu_ffn(ops: Ops, cfg: Config, lw: LayerWeights, h: Any) -> Any:
    """W_down(act(W_gate h) * (W_up h)), with biases where the file has them."""
    if lw.has("ffn_gate", "bias") or lw.has("ffn_up", "bias"):
        a = ops.glu(_linear(ops, h, lw, "ffn_gate"), _linear(ops, h, lw, "ffn_up"), cfg.act)
    else:
        a = ops.matmul_glu(h, lw["ffn_gate"], lw["ffn_up"], cfg.act)
    return _linear(ops, a, lw, "ffn_down")


def moe_ffn(ops: Ops, cfg: Config, lw: LayerWeights, h: Any) -> Any:
    """Routed experts (spec common-ops §5): top-k by gate probability, weighted sum in selection order."""
    logits = ops.matmul(h, lw["ffn_gate_inp"])
    ids, w = ops.router_topk(logits, cfg.n_expert_used, cfg.expert_gating, cfg.expert_norm_w, cfg.expert_w_scale)
    g = ops.matmul_experts(h, lw["ffn_gate_exps"], ids)
    u = ops.matmul_experts(h, lw["ffn_up_exps"], ids)
    o = ops.matmul_experts(ops.glu(g, u, cfg.act), lw["ffn_down_exps"], ids)  # (T, k, D)
    return ops.weighted_sum(o, w)


def embed_tokens(ops: Ops, cfg: Config, w: Weights, batch: Batch) -> Any:
    x = ops.embed(w["token_embd.weight"], batch.tokens)
    return ops.scale(x, cfg.embed_scale) if cfg.embed_scale != 1.0 else x


def lm_head(ops: Ops, cfg: Config, w: Weights, x: Any, batch: Batch) -> Any:
    """Final norm, output projection (tied or not) and the optional final softcap."""
    if batch.last_only and batch.n > 1:
        x = ops.slice_rows(x, batch.n - 1, batch.n)
    x = ops.rms_norm(x, w["output_norm.weight"], cfg.norm_eps)
    logits = ops.matmul(x, w["output.weight"])
    return ops.softcap(logits, cfg.final_softcap) if cfg.final_softcap > 0 else logits


# ------------------------------------------------------------------------------------------ tensor specs


def global_tensors(cfg: Config) -> list[TensorSpec]:
    D, V = cfg.n_embd, cfg.n_vocab
    return [TensorSpec("token_embd.weight", (V, D), "embed"),
            TensorSpec("output_norm.weight", (D,), "vector"),
            TensorSpec("output.weight", (V, D), "matmul", required=False)]


def attention_tensors(cfg: Config, il: int, qk_norm: bool = False, post_norm: bool = False) -> list[TensorSpec]:
    D, Dh, Dv, Hq, Hkv = cfg.n_embd, cfg.head_dim, cfg.head_dim_v, cfg.n_head, cfg.n_head_kv
    p = f"blk.{il}."
    qkv = p + "attn_qkv.weight"
    specs = [TensorSpec(p + "attn_norm.weight", (D,), "vector"),
             TensorSpec(p + "attn_q.weight", (Hq * Dh, D), alt=qkv),
             TensorSpec(p + "attn_k.weight", (Hkv * Dh, D), alt=qkv),
             TensorSpec(p + "attn_v.weight", (Hkv * Dv, D), alt=qkv),
             TensorSpec(qkv, ((Hq + Hkv) * Dh + Hkv * Dv, D), required=False),
             TensorSpec(p + "attn_output.weight", (D, Hq * Dv))]
    for short, n in (("attn_q", Hq * Dh), ("attn_k", Hkv * Dh), ("attn_v", Hkv * Dv),
                     ("attn_qkv", (Hq + Hkv) * Dh + Hkv * Dv), ("attn_output", D)):
        specs.append(TensorSpec(p + short + ".bias", (n,), "vector", required=False))
    if qk_norm:
        specs += [TensorSpec(p + "attn_q_norm.weight", (Dh,), "vector"),
                  TensorSpec(p + "attn_k_norm.weight", (Dh,), "vector")]
    if post_norm:
        specs.append(TensorSpec(p + "post_attention_norm.weight", (D,), "vector"))
    return specs


def ffn_tensors(cfg: Config, il: int, post_norm: bool = False) -> list[TensorSpec]:
    D, F, p = cfg.n_embd, cfg.n_ff, f"blk.{il}."
    specs = [TensorSpec(p + "ffn_norm.weight", (D,), "vector"),
             TensorSpec(p + "ffn_gate.weight", (F, D)), TensorSpec(p + "ffn_up.weight", (F, D)),
             TensorSpec(p + "ffn_down.weight", (D, F))]
    for short, n in (("ffn_gate", F), ("ffn_up", F), ("ffn_down", D)):
        specs.append(TensorSpec(p + short + ".bias", (n,), "vector", required=False))
    if post_norm:
        specs.append(TensorSpec(p + "post_ffw_norm.weight", (D,), "vector"))
    return specs


def moe_tensors(cfg: Config, il: int) -> list[TensorSpec]:
    D, E, Fe, p = cfg.n_embd, cfg.n_expert, cfg.n_ff_exp, f"blk.{il}."
    return [TensorSpec(p + "ffn_norm.weight", (D,), "vector"),
            TensorSpec(p + "ffn_gate_inp.weight", (E, D)),
            TensorSpec(p + "ffn_gate_exps.weight", (E, Fe, D), "matmul_experts"),
            TensorSpec(p + "ffn_up_exps.weight", (E, Fe, D), "matmul_experts"),
            TensorSpec(p + "ffn_down_exps.weight", (E, D, Fe), "matmul_experts")]


def attention_cache_layout(cfg: Config) -> list[LayerCacheSpec]:
    """One KV cache entry per layer; sliding-window layers get their window."""
    return [LayerCacheSpec(cfg.n_head_kv, cfg.head_dim, cfg.head_dim_v, cfg.window(il)) for il in range(cfg.n_layer)]
