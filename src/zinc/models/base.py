"""What every architecture shares: `Config` (hyper-parameters and named quirks), tensor specs, weights, batches.

`Config.from_gguf(gguf)` reads the `{arch}.*` metadata exactly as llama.cpp's `load_hparams` does
(defaults included) through the architecture module found in the registry; each architecture
module then sets its quirks as named fields (query pre-scale, q/k norm, post norms, embedding
scale, final softcap, sliding-window pattern, rope per layer kind, per-layer head shapes, gated
attention, V norm, shared-KV layers, experts and shared experts, Gated DeltaNet layers). Shared
code reads those fields and never tests the architecture name.

`load_weights` checks every tensor an architecture declares (presence and shape, with errors naming
the tensor), runs the backend's capability check, then uploads the weights, stacking the
projections of one input and folding shared experts into the routed stacks for a backend that
asks (`layers.stack_groups`, `layers.fold_shared_experts`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Iterable, Sequence

import numpy as np

from zinc.backends.base import Ops, QTensor, RopeParams, WeightUse, check_capabilities
from zinc.errors import GGUFError, UnsupportedModelError

_REQUIRED = object()


@dataclass(frozen=True)
class Config:
    """Hyper-parameters of a model plus every architecture quirk, as named fields."""

    arch: str
    n_vocab: int
    n_embd: int
    n_layer: int
    n_head: int
    n_head_kv: int
    head_dim: int  # of keys and queries
    head_dim_v: int
    n_ff: int
    n_ctx_train: int
    norm_eps: float
    rope: RopeParams  # full-attention layers
    rope_swa: RopeParams  # sliding-window layers
    kq_scale: float  # multiplies q.k before the softmax
    n_swa: int = 0  # sliding window (keys visible: the current one and n_swa - 1 before it)
    swa_layers: tuple[bool, ...] = ()  # per layer: True = sliding window; empty = none
    q_scale: float = 1.0  # query pre-scale applied after rope (Gemma 3's f_attention_scale)
    qk_norm: bool = False  # per-head RMS norm of q and k before rope (attn_q_norm / attn_k_norm)
    post_norms: bool = False  # RMS norms on the attention and FFN outputs (Gemma)
    embed_scale: float = 1.0  # token embeddings multiplied by this (Gemma: sqrt(n_embd))
    final_softcap: float = 0.0  # logits = cap * tanh(logits / cap) when > 0
    act: str = "silu"  # GLU activation: "silu" or "gelu"
    n_expert: int = 0
    n_expert_used: int = 0
    n_ff_exp: int = 0
    expert_gating: str = "softmax"
    expert_norm_w: bool = False  # renormalise the selected expert weights to sum 1
    expert_w_scale: float = 0.0  # 0 or 1: no scaling
    n_ff_shexp: int = 0  # shared expert width (its output is scaled by sigmoid(ffn_gate_inp_shexp . x))
    # per-layer attention shapes (empty: head_dim / head_dim_v / n_head_kv for every layer)
    layer_head_dim: tuple[int, ...] = ()
    layer_n_head_kv: tuple[int, ...] = ()
    attn_gate: bool = False  # q rows carry a per-head output gate: [q_h, gate_h]; out *= sigmoid(gate)
    v_norm: bool = False  # unweighted RMS norm of V per head (Gemma 4)
    kv_source: tuple[int, ...] = ()  # per layer: the layer whose KV cache it reads (shared-KV layers)
    # Gated DeltaNet (recurrent) layers
    recurrent_layers: tuple[bool, ...] = ()  # per layer: True = Gated DeltaNet
    ssm_conv_kernel: int = 0  # K
    ssm_state: int = 0  # S: head dim of the DeltaNet q/k/v heads
    ssm_k_heads: int = 0  # Hk
    ssm_v_heads: int = 0  # Hv (v-head h reads k-head h % Hk)
    moe_layers: tuple[bool, ...] = ()  # per layer: routed experts (empty: every layer iff n_expert > 0)
    layer_n_ff: tuple[int, ...] = ()  # per-layer dense FFN width (empty: n_ff everywhere)
    n_embd_per_layer: int = 0  # Gemma 4 per-layer embeddings width (0: none)

    def is_swa(self, il: int) -> bool:
        return bool(self.swa_layers) and self.swa_layers[il]

    def is_recurrent(self, il: int) -> bool:
        return bool(self.recurrent_layers) and self.recurrent_layers[il]

    def head_dim_of(self, il: int) -> int:
        return self.layer_head_dim[il] if self.layer_head_dim else self.head_dim

    def head_dim_v_of(self, il: int) -> int:
        return self.layer_head_dim[il] if self.layer_head_dim else self.head_dim_v

    def n_head_kv_of(self, il: int) -> int:
        return self.layer_n_head_kv[il] if self.layer_n_head_kv else self.n_head_kv

    def is_moe(self, il: int) -> bool:
        return self.moe_layers[il] if self.moe_layers else self.n_expert > 0

    def n_ff_of(self, il: int) -> int:
        return self.layer_n_ff[il] if self.layer_n_ff else self.n_ff

    def kv_layer(self, il: int) -> int:
        """The layer whose KV cache layer il reads (itself unless it shares an earlier one's)."""
        return self.kv_source[il] if self.kv_source else il

    def rope_for(self, il: int) -> RopeParams:
        return self.rope_swa if self.is_swa(il) else self.rope

    def window(self, il: int) -> int:
        return self.n_swa if self.is_swa(il) else 0

    @classmethod
    def from_gguf(cls, gguf: Any) -> "Config":
        """The config of an opened GGUFFile, built by its architecture's module."""
        from zinc.models.registry import get_architecture

        return get_architecture(gguf.architecture, gguf.path).config(gguf)


class Meta:
    """Typed access to `{arch}.*` metadata with llama.cpp's defaults and clear errors."""

    def __init__(self, gguf: Any, arch: str) -> None:
        self.gguf, self.arch, self.md = gguf, arch, gguf.metadata

    def key(self, name: str) -> str:
        return f"{self.arch}.{name}"

    def get(self, name: str, default: Any = _REQUIRED) -> Any:
        k = self.key(name)
        if k in self.md:
            return self.md[k]
        if default is _REQUIRED:
            raise GGUFError(self.gguf.path, f"required metadata key is missing (architecture {self.arch})", k)
        return default

    def uniform(self, name: str, default: Any = _REQUIRED) -> Any:
        """A key that llama.cpp reads with get_key_or_arr; zinc needs one value for all layers."""
        v = self.get(name, default)
        if isinstance(v, (list, np.ndarray)):
            vals = {int(x) for x in np.asarray(v).reshape(-1)}
            if len(vals) != 1:
                raise UnsupportedModelError(f"{self.gguf.path}: per-layer values of {self.key(name)} "
                                            f"({sorted(vals)}) are not supported for {self.arch}")
            return vals.pop()
        return v

    def per_layer(self, name: str, n_layer: int, default: Any = _REQUIRED) -> tuple[int, ...]:
        """A get_key_or_arr key as one int per layer (a scalar repeated, or the array's first n_layer)."""
        v = self.get(name, default)
        if isinstance(v, (list, np.ndarray)):
            vals = [int(x) for x in np.asarray(v).reshape(-1)]
            if len(vals) < n_layer:
                raise GGUFError(self.gguf.path, f"has {len(vals)} values, expected {n_layer}", self.key(name))
            return tuple(vals[:n_layer])
        return (int(v),) * n_layer


def common_config(gguf: Any, arch: str, **overrides: Any) -> Config:
    """The fields every attention model shares, read like llama.cpp's generic load_hparams."""
    m = Meta(gguf, arch)
    n_embd = int(m.get("embedding_length"))
    n_head = int(m.uniform("attention.head_count"))
    head_dim = int(m.get("attention.key_length", n_embd // n_head))
    n_layer = int(m.get("block_count")) - int(m.get("nextn_predict_layers", 0))
    rope = rope_params(m, head_dim, mode=overrides.pop("rope_mode", "norm"))
    kw: dict[str, Any] = dict(
        arch=arch, n_vocab=vocab_size(gguf), n_embd=n_embd, n_layer=n_layer, n_head=n_head, head_dim=head_dim,
        head_dim_v=int(m.get("attention.value_length", n_embd // n_head)), n_ctx_train=int(m.get("context_length")),
        norm_eps=float(m.get("attention.layer_norm_rms_epsilon")), rope=rope, rope_swa=rope,
        kq_scale=float(np.float32(1) / np.sqrt(np.float32(head_dim))),
        n_expert=int(m.get("expert_count", 0)), n_expert_used=int(m.uniform("expert_used_count", 0)))
    kw.update(overrides)  # an architecture that reads a key per layer passes its own value here
    if "n_head_kv" not in kw:
        kw["n_head_kv"] = int(m.uniform("attention.head_count_kv", n_head))
    if "n_ff" not in kw:
        kw["n_ff"] = int(m.uniform("feed_forward_length", 0))
    return Config(**kw)


def swa_pattern(m: Meta, n_layer: int, default: int = 6) -> tuple[bool, ...]:
    """llama.cpp's load_swa_pattern: a bool array, or a period n (layer i slides iff i % n < n - 1)."""
    v = m.get("attention.sliding_window_pattern", default)
    if isinstance(v, (list, np.ndarray)):
        return tuple(bool(x) for x in np.asarray(v).reshape(-1)[:n_layer])
    n = int(v)
    return tuple(n == 0 or il % n < n - 1 for il in range(n_layer))


def vocab_size(gguf: Any) -> int:
    """llama.cpp's n_vocab: the tokenizer's token count, else the embedding's row count."""
    toks = gguf.metadata.get("tokenizer.ggml.tokens")
    if toks is not None:
        return len(toks)
    if "token_embd.weight" in gguf.tensors:
        return int(gguf.tensors["token_embd.weight"].shape[0])
    raise GGUFError(gguf.path, "cannot tell the vocabulary size (no tokenizer.ggml.tokens, no token_embd)")


def rope_params(m: Meta, head_dim: int, mode: str) -> RopeParams:
    """Rope parameters of full-attention layers (spec common-ops §2.3)."""
    n_dims = int(m.get("rope.dimension_count", head_dim))
    scaling = str(m.get("rope.scaling.type", "linear"))
    if scaling not in ("none", "linear", "yarn"):
        raise UnsupportedModelError(f"{m.gguf.path}: rope scaling type {scaling!r} ({m.key('rope.scaling.type')}) "
                                    "is not supported")
    factor = float(m.get("rope.scaling.factor", m.get("rope.scale_linear", 0.0)))
    freq_scale = 1.0 if (factor == 0.0 or scaling == "none") else float(np.float32(1) / np.float32(factor))
    ext_factor = 1.0 if scaling == "yarn" else 0.0
    attn_factor = 1.0
    if ext_factor:
        f = 1.0 / freq_scale
        def mscale(s: float, ms: float) -> float:
            return 1.0 if s <= 1.0 else 0.1 * ms * math.log(s) + 1.0
        log_mul = float(m.get("rope.scaling.yarn_log_multiplier", 0.0))
        attn_factor = mscale(f, 1.0) / mscale(f, log_mul) if log_mul else mscale(f, 1.0)
        attn_factor *= 1.0 / (1.0 + 0.1 * math.log(f))
    attn_factor *= float(m.get("rope.scaling.attn_factor", 1.0))
    n_ctx_train = int(m.get("context_length"))
    return RopeParams(n_dims=n_dims, mode=mode, freq_base=float(m.get("rope.freq_base", 10000.0)),
                      freq_scale=freq_scale, ext_factor=ext_factor, attn_factor=attn_factor,
                      n_ctx_orig=int(m.get("rope.scaling.original_context_length", n_ctx_train)))


# ------------------------------------------------------------------------------------------ tensors


@dataclass(frozen=True)
class TensorSpec:
    """A tensor an architecture reads: row-major shape, the op that consumes it, whether required."""

    name: str
    shape: tuple[int, ...]
    op: str = "matmul"  # "matmul", "embed", "matmul_experts" (uploaded as weights) or "vector"
    required: bool = True
    alt: str = ""  # another tensor whose presence makes this one unnecessary (fused attn_qkv)
    view: tuple[int, ...] = ()  # upload with this row-major shape (same elements), e.g. a (D,) gate as (1, D)
    stack: str = ""  # weights of one layer with the same label read the same input (see layers.stack_groups)


class LayerWeights:
    """The weights of block `il`, addressed by their short GGUF names ("attn_q", "ffn_norm", ...)."""

    def __init__(self, weights: "Weights", il: int) -> None:
        self._w, self.il = weights, il

    def __getitem__(self, short: str) -> Any:
        return self._w[f"blk.{self.il}.{short}.weight"]

    def get(self, short: str, kind: str = "weight") -> Any:
        return self._w.get(f"blk.{self.il}.{short}.{kind}")

    def has(self, short: str, kind: str = "weight") -> bool:
        """Whether the file has the tensor (uploaded alone or as a part of a stacked weight)."""
        name = f"blk.{self.il}.{short}.{kind}"
        return name in self._w.tensors or name in self._w.stacks or name in self._w.folded

    def shared_expert_folded(self) -> bool:
        """Whether the loader also stored this layer's shared expert as the last expert of the routed stacks
        (`layers.fold_shared_experts`): expert id E of ffn_{gate,up,down}_exps, E = the router's expert count."""
        return f"blk.{self.il}.ffn_up_shexp.weight" in self._w.folded

    def stack_of(self, short: str) -> "Stack | None":
        """The stacked weight that holds weight `short`, if the loader stacked it."""
        return self._w.stacks.get(f"blk.{self.il}.{short}.weight")

    def raw(self, suffix: str) -> Any:
        """A tensor whose name has no `.weight` suffix (e.g. `ssm_a`)."""
        return self._w[f"blk.{self.il}.{suffix}"]


@dataclass(frozen=True)
class Stack:
    """A stacked weight of a layer: its short name, its parts' short names and row counts, in order."""

    name: str  # "attn_q+attn_k": parts joined by "+"
    parts: tuple[str, ...]
    rows: tuple[int, ...]


class Weights:
    """Uploaded tensors by their GGUF names (`output.weight` aliases `token_embd.weight` when tied);
    `stacks` maps the GGUF name of each weight uploaded as a part of a stacked one to its `Stack`;
    `folded` names each shared-expert weight also uploaded as the last expert of its layer's routed stack."""

    def __init__(self, tensors: dict[str, Any], stacks: dict[str, Stack] | None = None,
                 folded: set[str] | None = None) -> None:
        self.tensors, self.stacks, self.folded = tensors, stacks or {}, folded or set()

    def __getitem__(self, name: str) -> Any:
        return self.tensors[name]

    def get(self, name: str) -> Any:
        return self.tensors.get(name)

    def layer(self, il: int) -> LayerWeights:
        return LayerWeights(self, il)


def load_weights(ops: Ops, gguf: Any, specs: Iterable[TensorSpec]) -> Weights:
    """Check presence and shape of every declared tensor and the backend's capabilities; upload."""
    present = list(_resolve_specs(gguf, list(specs)))
    uses = [WeightUse(s.op, s.name, gguf.tensors[s.name].ggml_type) for s in present if s.op != "vector"]
    tied = "output.weight" not in gguf.tensors and "token_embd.weight" in gguf.tensors
    if tied:
        uses.append(WeightUse("matmul", "token_embd.weight (tied output)", gguf.tensors["token_embd.weight"].ggml_type))
    check_capabilities(ops, uses, where=str(gguf.path))
    from zinc.models.layers import concat_rows, fold_shared_experts, stack_groups  # layers imports this module
    out: dict[str, Any] = {}
    stacks: dict[str, Stack] = {}
    for group in stack_groups(ops, gguf, present):
        layer = layer_prefix(group[0].name)
        qts = [_qtensor(gguf, s) for s in group]
        parts = tuple(s.name[len(layer):-len(".weight")] for s in group)
        st = Stack("+".join(parts), parts, tuple(q.shape[0] for q in qts))
        out[f"{layer}{st.name}.weight"] = ops.upload(concat_rows(f"{layer}{st.name}.weight", qts))
        stacks.update((s.name, st) for s in group)
    folded: set[str] = set()
    for layer in fold_shared_experts(ops, gguf, present):
        for m in ("gate", "up", "down"):
            ename, sname = f"{layer}ffn_{m}_exps.weight", f"{layer}ffn_{m}_shexp.weight"
            sh = QTensor.from_gguf(gguf, sname)
            out[ename] = ops.upload(concat_rows(ename, [QTensor.from_gguf(gguf, ename),
                                                        replace(sh, shape=(1, *sh.shape))]))  # expert E
            folded.add(sname)
    for s in present:
        if s.name in stacks or s.name in out:
            continue
        qt = _qtensor(gguf, s)
        out[s.name] = ops.from_numpy(qt.dequantize()) if s.op == "vector" else ops.upload(qt)
    if tied:
        out["output.weight"] = out["token_embd.weight"]
    return Weights(out, stacks, folded)


def layer_prefix(name: str) -> str:
    """"blk.N." of a layer tensor's name."""
    return name[:name.index(".", len("blk.")) + 1]


def _qtensor(gguf: Any, s: TensorSpec) -> QTensor:
    qt = QTensor.from_gguf(gguf, s.name)
    return replace(qt, shape=tuple(s.view)) if s.view else qt


def _resolve_specs(gguf: Any, specs: list[TensorSpec]) -> Iterable[TensorSpec]:
    arch = gguf.architecture
    for s in specs:
        info = gguf.tensors.get(s.name)
        if info is None:
            if s.required and not (s.alt and s.alt in gguf.tensors):
                raise GGUFError(gguf.path, f"required tensor is missing (architecture {arch})", f"tensor {s.name}")
            continue
        if tuple(info.shape) != tuple(s.shape):
            raise GGUFError(gguf.path, f"shape {tuple(info.shape)} does not match the expected {tuple(s.shape)} "
                            f"(architecture {arch}, row-major)", f"tensor {s.name}")
        yield s


# ------------------------------------------------------------------------------------------ batches


@dataclass
class Batch:
    """One step's tokens on the backend: ids and absolute positions (T,), plus host copies.

    `seqs` empty: the rows are one sequence's consecutive tokens (its cache: a `KVCache`). Otherwise the
    rows of several sequences, `seqs[i]` rows each in order (the cache: a `CacheGroup` of theirs); with
    `last_only` the logits are then each sequence's last row's (len(seqs), n_vocab)."""

    tokens: Any
    pos: Any
    pos_host: np.ndarray
    last_only: bool = False  # compute logits for the last token only (of each sequence)
    seqs: tuple[int, ...] = ()

    @property
    def n(self) -> int:
        return len(self.pos_host)

    @classmethod
    def make(cls, ops: Ops, ids: Iterable[int], start: int, last_only: bool = False) -> "Batch":
        ids_np = np.asarray(list(ids), np.int32)
        pos = np.arange(start, start + len(ids_np), dtype=np.int32)
        return cls(ops.from_numpy(ids_np), ops.from_numpy(pos), pos, last_only)

    @classmethod
    def make_seqs(cls, ops: Ops, items: Sequence[tuple[Sequence[int], int]], last_only: bool = True) -> "Batch":
        """Rows of several sequences: for each (ids, start), its ids at positions start, start + 1, ..."""
        ids_np = np.asarray([t for ids, _ in items for t in ids], np.int32)
        pos = np.concatenate([np.arange(start, start + len(ids), dtype=np.int32) for ids, start in items])
        return cls(ops.from_numpy(ids_np), ops.from_numpy(pos), pos, last_only, tuple(len(ids) for ids, _ in items))

    def row_ranges(self) -> list[tuple[int, int]]:
        """(first row, end row) of each sequence (one range for a single-sequence batch)."""
        if not self.seqs:
            return [(0, self.n)]
        ends = np.cumsum(self.seqs).tolist()
        return [(e - n, e) for n, e in zip(self.seqs, ends)]
