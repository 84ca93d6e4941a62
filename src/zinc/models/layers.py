"""Building blocks shared by the architectures, written against `Ops` only.

Each block reads its quirks from `Config` fields (q/k norm, V norm, output gate, query pre-scale,
window, per-layer head shapes, shared-KV layers, activation, expert gating, shared expert) and
optional tensors from the weights (biases, fused `attn_qkv` / `ffn_gate_up_exps`, a missing
`attn_v` meaning V = K, expert biases and scales), never from the architecture name. The
tensor-spec helpers list what each block reads, for `load_weights`, and label the projections of
one input that a backend may get stacked (`stack_groups`) and the shared experts it may get folded
into the routed stacks (`fold_shared_experts`), both for `base.load_weights`; blocks read those through
`projections` and `moe_ffn`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from zinc.backends.base import Ops, QTensor
from zinc.engine.cache import LayerCacheSpec, RecurrentCacheSpec
from zinc.models.base import Batch, Config, LayerWeights, TensorSpec, Weights, layer_prefix


def _linear(ops: Ops, x: Any, lw: LayerWeights, short: str) -> Any:
    """x @ W.T (+ bias when the file has one)."""
    return _biased(ops, ops.matmul(x, lw[short]), lw, short)


def _biased(ops: Ops, y: Any, lw: LayerWeights, short: str) -> Any:
    """y + weight `short`'s bias where the file has one."""
    b = lw.get(short, "bias")
    return y if b is None else ops.add(y, b)


def projections(ops: Ops, lw: LayerWeights, h: Any, shorts: tuple[str, ...]) -> list[Any]:
    """h @ W.T (+ bias) for each named weight of the layer, in order. Weights the loader stacked
    (`LayerWeights.stack_of`) are one matmul whose output is split (on CUDA and NumPy the parts are
    contiguous); a stack is computed once even when several of its parts are asked for. The matmuls
    left (a stack and the weights of other types) go to `ops.matmuls` together."""
    jobs: dict[str, Any] = {}  # weight name -> its Stack, or None for a weight of its own
    for short in shorts:
        st = lw.stack_of(short)
        jobs.setdefault(st.name if st is not None else short, st)
    ys = ops.matmuls(h, [lw[name] for name in jobs])  # one launch for a few weights where the backend can
    out: dict[str, Any] = {}
    for (name, st), y in zip(jobs.items(), ys):
        if st is not None:
            out.update(zip(st.parts, ops.split(y, st.rows)))
        else:
            out[name] = _biased(ops, y, lw, name)
    return [out[s] for s in shorts]


def _q_width(cfg: Config, il: int) -> int:
    return cfg.n_head * cfg.head_dim_of(il) * (2 if cfg.attn_gate else 1)


def qkv_projections(ops: Ops, cfg: Config, lw: LayerWeights, h: Any, T: int,
                    with_kv: bool = True) -> tuple[Any, Any, Any]:
    """Q (T, Hq, Dh or 2*Dh with the output gate), K (T, Hkv, Dh), V (T, Hkv, Dv); K, V None if not with_kv.

    Separate, stacked at load (`projections`) or fused in the file (attn_qkv) weights; without
    `attn_v` the raw K projection is also V.
    """
    il = lw.il
    Dh, Dv, Hkv = cfg.head_dim_of(il), cfg.head_dim_v_of(il), cfg.n_head_kv_of(il)
    nq = _q_width(cfg, il)
    if lw.has("attn_qkv"):
        q, k, v = ops.split(_linear(ops, h, lw, "attn_qkv"), (nq, Hkv * Dh, Hkv * Dv))
    elif not with_kv:
        q, k, v = projections(ops, lw, h, ("attn_q",))[0], None, None
    else:
        has_v = lw.has("attn_v")
        q, k, *v = projections(ops, lw, h, ("attn_q", "attn_k", "attn_v") if has_v else ("attn_q", "attn_k"))
        v = v[0] if has_v else k
    q = ops.reshape(q, (T, cfg.n_head, nq // cfg.n_head))
    if not with_kv:
        return q, None, None
    return q, ops.reshape(k, (T, Hkv, Dh)), ops.reshape(v, (T, Hkv, Dv))


def self_attention(ops: Ops, cfg: Config, lw: LayerWeights, h: Any, batch: Batch, cache: Any,
                   rope_freqs: Any = None) -> Any:
    """Projections, q/k (and V) norms, rope, KV-cache write, attention, output gate and projection.

    A shared-KV layer (cfg.kv_layer(il) != il) computes only Q and reads the other layer's cache. A batch of
    several sequences (`batch.seqs`, cache a `CacheGroup`) shares every op but the cache's: each sequence's rows
    attend to its own cells (`Ops.rope_qk_attention_seqs`, or the ops below a sequence at a time).
    """
    T, il = batch.n, lw.il
    src = cfg.kv_layer(il)
    Dh, Dv = cfg.head_dim_of(il), cfg.head_dim_v_of(il)
    q, k, v = qkv_projections(ops, cfg, lw, h, T, with_kv=src == il)
    gate = None
    if cfg.attn_gate:
        q, gate = ops.split(q, (Dh, Dh))
    if k is not None and cfg.v_norm:
        v = ops.rms_norm(v, None, cfg.norm_eps)
    kv = cache.layer(src)
    if not batch.seqs:
        a = _attend(ops, cfg, lw, q, k, v, batch.pos, kv, rope_freqs)
    elif k is not None and cfg.q_scale == 1.0:
        a = ops.rope_qk_attention_seqs(q, k, v, batch.pos, cfg.rope_for(il), rope_freqs, kv, cfg.kq_scale,
                                       window=cfg.window(il), sinks=lw.get("attn_sinks"), **_qk_norms(cfg, lw, k))
    else:
        parts = []
        for (r0, r1), part in zip(batch.row_ranges(), kv.parts):
            rows = [None if x is None else ops.slice_rows(x, r0, r1) for x in (q, k, v, batch.pos)]
            parts.append(_attend(ops, cfg, lw, *rows, part, rope_freqs))
        a = ops.concat_rows(parts)
    a = ops.reshape(a, (T, cfg.n_head * Dv))
    if gate is not None:
        a = ops.mul(a, ops.unary(ops.reshape(gate, (T, cfg.n_head * Dh)), "sigmoid"))
    return _linear(ops, a, lw, "attn_output")


def _qk_norms(cfg: Config, lw: LayerWeights, k: Any) -> dict[str, Any]:
    """The per-head q / k norm weights and eps of the rope ops (None: no norm)."""
    return dict(q_norm=lw["attn_q_norm"] if cfg.qk_norm else None,
                k_norm=lw["attn_k_norm"] if cfg.qk_norm and k is not None else None, eps=cfg.norm_eps)


def _attend(ops: Ops, cfg: Config, lw: LayerWeights, q: Any, k: Any, v: Any, pos: Any, kv: Any,
            rope_freqs: Any) -> Any:
    """One sequence's rows: rope (with the q / k norms), K/V write into its cache layer `kv` (unless k is None:
    a shared-KV layer), attention; (T, Hq, Dv)."""
    il = lw.il
    rp = cfg.rope_for(il)
    nm = _qk_norms(cfg, lw, k)
    if k is not None and cfg.q_scale == 1.0:  # Q's rope, K's rope + cache write and the attention: one op
        return ops.rope_qk_attention(q, k, v, pos, rp, rope_freqs, kv.k, kv.v, kv.pos, kv.slots, kv.n_kv,
                                     cfg.kq_scale, window=cfg.window(il), sinks=lw.get("attn_sinks"), **nm)
    if k is not None:  # Q's rope and K's rope + cache write: one op
        q = ops.rope_qk_kv_write(q, k, v, pos, rp, rope_freqs, kv.k, kv.v, kv.pos, kv.slots, **nm)
    elif nm["q_norm"] is not None:
        q = ops.norm_rope(q, nm["q_norm"], cfg.norm_eps, pos, rp, rope_freqs)
    else:
        q = ops.rope(q, pos, rp, rope_freqs)
    if cfg.q_scale != 1.0:
        q = ops.scale(q, cfg.q_scale)
    return ops.attention(q, kv.k, kv.v, pos, kv.pos, kv.n_kv, cfg.kq_scale, window=cfg.window(il),
                         sinks=lw.get("attn_sinks"))


def gated_delta_net(ops: Ops, cfg: Config, lw: LayerWeights, h: Any, batch: Batch, cache: Any) -> Any:
    """The Gated DeltaNet mixer (spec arch-qwen35.md §3.2) of one step; its state lives in the cache (a
    `CacheGroup`'s sequences: each one's rows on its own state, `Ops.conv_delta_rule_seqs`)."""
    T = batch.n
    S, Hk, Hv = cfg.ssm_state, cfg.ssm_k_heads, cfg.ssm_v_heads
    # mixed (T, 2*Hk*S + Hv*S), z (T, Hv*S), b (T, Hv): beta = sigmoid(b),
    # alpha (T, Hv): log decay g = softplus(alpha + dt_bias) * ssm_a <= 0
    mixed, z, b, alpha = projections(ops, lw, h, ("attn_qkv", "attn_gate", "ssm_beta", "ssm_alpha"))
    args = (mixed, alpha, b, lw["ssm_conv1d"], lw.get("ssm_dt", "bias"), lw.raw("ssm_a"))
    if batch.seqs:
        o = ops.conv_delta_rule_seqs(*args, cache.layer(lw.il), (Hk, Hv, S), cfg.norm_eps)
    else:
        state = cache.layer(lw.il)
        o = ops.conv_delta_rule(*args, state.conv, state.ssm, (Hk, Hv, S), cfg.norm_eps)
    o = ops.rms_norm_gated(o, lw["ssm_norm"], cfg.norm_eps, ops.reshape(z, (T, Hv, S)), "silu")
    return ops.matmul(ops.reshape(o, (T, Hv * S)), lw["ssm_out"])


def glu_ffn(ops: Ops, cfg: Config, lw: LayerWeights, h: Any, suffix: str = "") -> Any:
    """W_down(act(W_gate h) * (W_up h)), with biases where the file has them (suffix "_shexp": shared expert)."""
    gate, up, down = f"ffn_gate{suffix}", f"ffn_up{suffix}", f"ffn_down{suffix}"
    if lw.has(gate, "bias") or lw.has(up, "bias"):
        a = ops.glu(_linear(ops, h, lw, gate), _linear(ops, h, lw, up), cfg.act)
    else:
        a = ops.matmul_glu(h, lw[gate], lw[up], cfg.act)
    return _linear(ops, a, lw, down)


def _experts(ops: Ops, x: Any, lw: LayerWeights, short: str, ids: Any) -> Any:
    """Selected experts' x @ W_e.T (T, k, N), times the per-expert `.scale`, plus the per-expert bias."""
    y = ops.matmul_experts(x, lw[short], ids)
    s = lw.get(short, "scale")
    if s is not None:
        y = ops.mul(y, ops.embed(s, ids))  # (E, 1) rows -> (T, k, 1)
    b = lw.get(short, "bias")
    return y if b is None else ops.add(y, ops.embed(b, ids))


def moe_ffn(ops: Ops, cfg: Config, lw: LayerWeights, h: Any, logits: Any = None, shared: Any = None,
            shared_gate: Any = None, folded: bool = False) -> Any:
    """Routed experts (spec common-ops §5): top-k by gate probability, weighted sum in selection order.

    `logits` replaces the router's own (W_router h + b) when the architecture computes them itself;
    `shared` (T, D), a shared expert's output, joins the sum, scaled by sigmoid(shared_gate (T, 1)) if given.
    `folded` (the loader folded the shared expert into the stacks, `LayerWeights.shared_expert_folded`): it is
    expert E, the last slot of every token's selection, weighted by sigmoid(shared_gate); no `shared`.
    """
    if logits is None:
        logits = projections(ops, lw, h, ("ffn_gate_inp",))[0]
    route = (cfg.n_expert_used, cfg.expert_gating, cfg.expert_norm_w, cfg.expert_w_scale)
    if folded:
        ids, w = ops.router_topk_shared(logits, *route, shared_gate)
    else:
        ids, w = ops.router_topk(logits, *route)
    if lw.has("ffn_gate_up_exps"):
        a = ops.glu(*ops.split(_experts(ops, h, lw, "ffn_gate_up_exps", ids), (cfg.n_ff_exp, cfg.n_ff_exp)), cfg.act)
    elif not any(lw.get(n, x) is not None for n in ("ffn_gate_exps", "ffn_up_exps") for x in ("scale", "bias")):
        a = ops.matmul_experts_glu(h, lw["ffn_gate_exps"], lw["ffn_up_exps"], ids, cfg.act)
    else:
        a = ops.glu(_experts(ops, h, lw, "ffn_gate_exps", ids), _experts(ops, h, lw, "ffn_up_exps", ids), cfg.act)
    o = _experts(ops, a, lw, "ffn_down_exps", ids)  # (T, k, D)
    return ops.weighted_sum(o, w) if shared is None else ops.weighted_sum_shared(o, w, shared, shared_gate)


def embed_tokens(ops: Ops, cfg: Config, w: Weights, batch: Batch) -> Any:
    x = ops.embed(w["token_embd.weight"], batch.tokens)
    return ops.scale(x, cfg.embed_scale) if cfg.embed_scale != 1.0 else x


def residual_norm(ops: Ops, cfg: Config, w: Weights, il: int, f: Any, x: Any) -> tuple[Any, Any]:
    """After layer il: the residual x + f and the norm that follows it, in one op (x, h): the next layer's
    pre-attention norm, or after the last layer the output norm (then `lm_head(..., normed=True)` takes h)."""
    nw = w.layer(il + 1)["attn_norm"] if il + 1 < cfg.n_layer else w["output_norm.weight"]
    return ops.add_rms_norm(f, x, nw, cfg.norm_eps)


def lm_head(ops: Ops, cfg: Config, w: Weights, x: Any, batch: Batch, normed: bool = False) -> Any:
    """Final norm (unless x is already normed), output projection (tied or not) and the optional final softcap."""
    if batch.last_only and not batch.seqs and batch.n > 1:
        x = ops.slice_rows(x, batch.n - 1, batch.n)
    elif batch.last_only and batch.n > len(batch.seqs):  # each sequence's last row
        x = ops.concat_rows([ops.slice_rows(x, r1 - 1, r1) for _, r1 in batch.row_ranges()])
    if not normed:
        x = ops.rms_norm(x, w["output_norm.weight"], cfg.norm_eps)
    logits = ops.matmul(x, w["output.weight"])
    return ops.softcap(logits, cfg.final_softcap) if cfg.final_softcap > 0 else logits


# ------------------------------------------------------------------------------------------ tensor specs


def stack_groups(ops: Ops, gguf: Any, present: list[TensorSpec]) -> list[list[TensorSpec]]:
    """The weights to upload stacked row-wise as one, each group in spec order.

    A matvec launch has a fixed cost, so a backend that asks gets the projections of one input as
    one weight: one matmul whose output the model splits (`layers.projections`). Candidates are
    the matmul weights of one layer with the same `TensorSpec.stack` label: "attn" (Q, K, V of an
    attention layer that writes its own KV), "delta" (a Gated DeltaNet layer's attn_qkv, attn_gate,
    ssm_beta, ssm_alpha), "ffn" (the router and the shared expert's gate). Among them, those without
    a bias that share a ggml type and a row length are stacked, two or more to a stack: in a
    Q4_K_M file (Q6_K V in some layers) Q and K where V has another type, all three elsewhere.
    `ops.fuse_projections` asks for every label, `ops.fuse_qkv` for "attn" only.
    """
    labels = ("attn",) if getattr(ops, "fuse_qkv", False) else ()
    if getattr(ops, "fuse_projections", False):
        labels = ("attn", "delta", "ffn")
    names = {s.name for s in present}
    classes: dict[tuple, list[TensorSpec]] = {}
    for s in present:
        shape = tuple(s.view or gguf.tensors[s.name].shape)
        if (s.stack not in labels or s.op != "matmul" or len(shape) != 2 or not s.name.endswith(".weight")
                or s.name[:-len("weight")] + "bias" in names):
            continue
        classes.setdefault((layer_prefix(s.name), s.stack, gguf.tensors[s.name].ggml_type, shape[1]), []).append(s)
    return [g for g in classes.values() if len(g) > 1]


def concat_rows(name: str, qts: list[QTensor]) -> QTensor:
    """Weights of one type and row length stacked row-wise (ggml rows are independent blocks)."""
    data = np.concatenate([np.ascontiguousarray(q.data).reshape(-1) for q in qts])
    shape = (sum(q.shape[0] for q in qts), *qts[0].shape[1:])
    return QTensor(name, qts[0].ggml_type, shape, data)


def fold_shared_experts(ops: Ops, gguf: Any, present: list[TensorSpec]) -> list[str]:
    """The layers ("blk.N.") whose shared expert the loader uploads as one more routed expert.

    A backend that asks (`ops.fold_shared_experts`: the most rows a step may have to take this form)
    gets, where a layer's ffn_{gate,up,down}_shexp have the types and the per-expert shapes of
    ffn_{gate,up,down}_exps (and a sigmoid gate ffn_gate_inp_shexp; no biases or scales), stacks of
    E + 1 experts: the shared one is expert E, picked for every token with weight sigmoid(gate)
    (`Ops.router_topk_shared`), so in a step of that many rows its GLU and down projection run in the
    routed experts' launches instead of three of their own. The shared weights are uploaded alone too
    (1/E of the stacks): longer steps (prompts) keep the shared expert's own matmuls, which are faster
    there (Qwen3.5-35B-A3B pp512 on the H200 lost a quarter folded). Every layer of the synthetic
    Qwen3.5-35B-A3B Q4_K_M qualifies (gate/up Q4_K, down Q4_K or Q6_K in both)."""
    if not getattr(ops, "fold_shared_experts", 0):
        return []
    names = {s.name for s in present}

    def foldable(e: str, sh: str) -> bool:  # routed stack e and shared weight sh, without ".weight"
        if f"{e}.weight" not in names or f"{sh}.weight" not in names or any(
                f"{n}.{x}" in names for n in (e, sh) for x in ("bias", "scale")):
            return False
        ei, si = gguf.tensors[f"{e}.weight"], gguf.tensors[f"{sh}.weight"]
        return ei.ggml_type == si.ggml_type and len(ei.shape) == 3 and tuple(ei.shape[1:]) == tuple(si.shape)

    layers = sorted({layer_prefix(s.name) for s in present if s.name.endswith("ffn_up_shexp.weight")})
    return [layer for layer in layers if f"{layer}ffn_gate_inp_shexp.weight" in names
            and all(foldable(f"{layer}ffn_{m}_exps", f"{layer}ffn_{m}_shexp") for m in ("gate", "up", "down"))]


def global_tensors(cfg: Config, tied_ok: bool = True) -> list[TensorSpec]:
    D, V = cfg.n_embd, cfg.n_vocab
    return [TensorSpec("token_embd.weight", (V, D), "embed"),
            TensorSpec("output_norm.weight", (D,), "vector"),
            TensorSpec("output.weight", (V, D), "matmul", required=not tied_ok)]


def attention_tensors(cfg: Config, il: int, qk_norm: bool = False, post_norm: bool = False,
                      v_optional: bool = False) -> list[TensorSpec]:
    D, Dh, Dv, Hq, Hkv = cfg.n_embd, cfg.head_dim_of(il), cfg.head_dim_v_of(il), cfg.n_head, cfg.n_head_kv_of(il)
    nq, has_kv = _q_width(cfg, il), cfg.kv_layer(il) == il
    p, stack = f"blk.{il}.", "attn" if has_kv else ""  # a shared-KV layer reads only its Q
    qkv = p + "attn_qkv.weight"
    specs = [TensorSpec(p + "attn_norm.weight", (D,), "vector"),
             TensorSpec(p + "attn_q.weight", (nq, D), alt=qkv, stack=stack),
             TensorSpec(p + "attn_k.weight", (Hkv * Dh, D), alt=qkv, required=has_kv, stack=stack),
             TensorSpec(p + "attn_v.weight", (Hkv * Dv, D), alt=qkv, required=has_kv and not v_optional,
                        stack=stack),
             TensorSpec(qkv, (nq + Hkv * Dh + Hkv * Dv, D), required=False),
             TensorSpec(p + "attn_output.weight", (D, Hq * Dv))]
    for short, n in (("attn_q", nq), ("attn_k", Hkv * Dh), ("attn_v", Hkv * Dv),
                     ("attn_qkv", nq + Hkv * Dh + Hkv * Dv), ("attn_output", D)):
        specs.append(TensorSpec(p + short + ".bias", (n,), "vector", required=False))
    if qk_norm:
        specs += [TensorSpec(p + "attn_q_norm.weight", (Dh,), "vector"),
                  TensorSpec(p + "attn_k_norm.weight", (Dh,), "vector", required=has_kv)]
    if post_norm:
        specs.append(TensorSpec(p + "post_attention_norm.weight", (D,), "vector"))
    return specs


def delta_net_tensors(cfg: Config, il: int) -> list[TensorSpec]:
    """A Gated DeltaNet mixer (spec arch-qwen35.md §2); the conv taps are read as an f32 (C, K) array."""
    D, S, Hk, Hv, K, p = cfg.n_embd, cfg.ssm_state, cfg.ssm_k_heads, cfg.ssm_v_heads, cfg.ssm_conv_kernel, f"blk.{il}."
    C = 2 * Hk * S + Hv * S
    return [TensorSpec(p + "attn_qkv.weight", (C, D), stack="delta"),
            TensorSpec(p + "attn_gate.weight", (Hv * S, D), stack="delta"),
            TensorSpec(p + "ssm_beta.weight", (Hv, D), stack="delta"),
            TensorSpec(p + "ssm_alpha.weight", (Hv, D), stack="delta"),
            TensorSpec(p + "ssm_conv1d.weight", (C, K), "vector"), TensorSpec(p + "ssm_dt.bias", (Hv,), "vector"),
            TensorSpec(p + "ssm_a", (Hv,), "vector"), TensorSpec(p + "ssm_norm.weight", (S,), "vector"),
            TensorSpec(p + "ssm_out.weight", (D, Hv * S))]


def ffn_tensors(cfg: Config, il: int, post_norm: bool = False, norm: str = "ffn_norm", n_ff: int = 0,
                suffix: str = "") -> list[TensorSpec]:
    D, F, p = cfg.n_embd, n_ff or cfg.n_ff, f"blk.{il}."
    specs = [TensorSpec(p + norm + ".weight", (D,), "vector")] if norm else []
    specs += [TensorSpec(p + f"ffn_gate{suffix}.weight", (F, D)), TensorSpec(p + f"ffn_up{suffix}.weight", (F, D)),
              TensorSpec(p + f"ffn_down{suffix}.weight", (D, F))]
    for short, n in ((f"ffn_gate{suffix}", F), (f"ffn_up{suffix}", F), (f"ffn_down{suffix}", D)):
        specs.append(TensorSpec(p + short + ".bias", (n,), "vector", required=False))
    if post_norm:
        specs.append(TensorSpec(p + "post_ffw_norm.weight", (D,), "vector"))
    return specs


def moe_tensors(cfg: Config, il: int, norm: str = "ffn_norm", biases: bool = False) -> list[TensorSpec]:
    """Router and experts (separate or fused gate/up); optional per-expert `.scale`; biases if asked."""
    D, E, Fe, p = cfg.n_embd, cfg.n_expert, cfg.n_ff_exp, f"blk.{il}."
    gu = p + "ffn_gate_up_exps.weight"
    specs = [TensorSpec(p + norm + ".weight", (D,), "vector")] if norm else []
    specs += [TensorSpec(p + "ffn_gate_inp.weight", (E, D), stack="ffn"),
              TensorSpec(p + "ffn_gate_exps.weight", (E, Fe, D), "matmul_experts", alt=gu),
              TensorSpec(p + "ffn_up_exps.weight", (E, Fe, D), "matmul_experts", alt=gu),
              TensorSpec(gu, (E, 2 * Fe, D), "matmul_experts", required=False),
              TensorSpec(p + "ffn_down_exps.weight", (E, D, Fe), "matmul_experts")]
    for short in ("ffn_gate_exps", "ffn_up_exps", "ffn_gate_up_exps", "ffn_down_exps"):
        specs.append(TensorSpec(p + short + ".scale", (E,), "embed", required=False, view=(E, 1)))
    if biases:
        specs += [TensorSpec(p + "ffn_gate_inp.bias", (E,), "vector"),
                  TensorSpec(p + "ffn_gate_exps.bias", (E, Fe), "embed"),
                  TensorSpec(p + "ffn_up_exps.bias", (E, Fe), "embed"),
                  TensorSpec(p + "ffn_down_exps.bias", (E, D), "embed")]
    return specs


def shared_expert_tensors(cfg: Config, il: int) -> list[TensorSpec]:
    D = cfg.n_embd
    gate = TensorSpec(f"blk.{il}.ffn_gate_inp_shexp.weight", (D,), view=(1, D), stack="ffn")
    return [gate] + ffn_tensors(cfg, il, norm="", n_ff=cfg.n_ff_shexp, suffix="_shexp")


def cache_layout(cfg: Config) -> list[LayerCacheSpec | RecurrentCacheSpec | None]:
    """Per layer: recurrent state, KV cells (sliding-window layers get their window) or nothing (shared KV)."""
    out: list[LayerCacheSpec | RecurrentCacheSpec | None] = []
    for il in range(cfg.n_layer):
        if cfg.is_recurrent(il):
            C = (2 * cfg.ssm_k_heads + cfg.ssm_v_heads) * cfg.ssm_state
            out.append(RecurrentCacheSpec(C, cfg.ssm_conv_kernel, cfg.ssm_v_heads, cfg.ssm_state))
        elif cfg.kv_layer(il) != il:
            out.append(None)
        else:
            out.append(LayerCacheSpec(cfg.n_head_kv_of(il), cfg.head_dim_of(il), cfg.head_dim_v_of(il),
                                      cfg.window(il)))
    return out


attention_cache_layout = cache_layout
