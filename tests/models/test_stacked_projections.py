"""Projections of one input stacked at load (`layers.stack_groups`) for a backend that asks: which
weights get stacked in mixed-type files, and logits equal to the unstacked model's (prompt and decode).

The NumPy backend is the oracle; the subclasses below only set the flags a GPU backend sets.
"""

from __future__ import annotations

import numpy as np
import pytest

import zinc.api
from zinc.backends.cpu import CpuOps
from zinc.gguf import GGUFFile

GROUPS = {"attn": ("attn_q", "attn_k", "attn_v"), "delta": ("attn_qkv", "attn_gate", "ssm_beta", "ssm_alpha"),
          "ffn": ("ffn_gate_inp", "ffn_gate_inp_shexp")}


class StackQKV(CpuOps):
    fuse_qkv = True


class StackAll(CpuOps):
    fuse_projections = True


def _expected(path, labels):
    """Stacked short names per layer, worked out from the file's types: the weights of one group
    with one type (all rows of one length here) and no bias, two or more."""
    want: dict[int, set[str]] = {}
    with GGUFFile(path) as g:
        n_layer = 1 + max(int(n.split(".")[1]) for n in g.tensors if n.startswith("blk."))
        for il in range(n_layer):
            for label in labels:
                by_type: dict[int, list[str]] = {}
                for short in GROUPS[label]:
                    info = g.tensors.get(f"blk.{il}.{short}.weight")
                    if info is not None and f"blk.{il}.{short}.bias" not in g.tensors:
                        by_type.setdefault(int(info.ggml_type), []).append(short)
                want.setdefault(il, set()).update("+".join(p) for p in by_type.values() if len(p) > 1)
    return {il: s for il, s in want.items() if s}


def _stacked(m):
    got: dict[int, set[str]] = {}
    for n in m.weights.tensors:
        if "+" in n:
            _, il, short, _ = n.split(".")
            got.setdefault(int(il), set()).add(short)
    return got


def _types(path, il, shorts):
    with GGUFFile(path) as g:
        return [g.tensors[f"blk.{il}.{s}.weight"].ggml_type.name for s in shorts]


def test_qk_stacked_where_v_has_another_type(tiny):
    """Qwen3 Q4_K_M: V is Q6_K in some layers; there Q and K are one weight and V stays alone."""
    path = tiny("qwen3-tiny", "Q4_K_M", by="synth")
    m = zinc.api.load(path, backend=StackQKV())
    got = _stacked(m)
    assert got == _expected(path, ["attn"])
    mixed = [il for il, s in got.items() if s == {"attn_q+attn_k"}]
    assert mixed and {il for il, s in got.items() if s == {"attn_q+attn_k+attn_v"}}
    il = mixed[0]
    assert _types(path, il, ("attn_q", "attn_k", "attn_v")) == ["Q4_K", "Q4_K", "Q6_K"]
    lw = m.weights.layer(il)
    st = lw.stack_of("attn_k")
    assert st is lw.stack_of("attn_q") and st.parts == ("attn_q", "attn_k") and lw.stack_of("attn_v") is None
    assert st.rows == (m.config.n_head * m.config.head_dim, m.config.n_head_kv * m.config.head_dim)
    assert f"blk.{il}.attn_v.weight" in m.weights.tensors and f"blk.{il}.attn_q.weight" not in m.weights.tensors
    assert lw.has("attn_q") and lw.has("attn_v")


@pytest.mark.parametrize("preset,ftype", [("qwen35-tiny", "Q4_K_M"), ("qwen35moe-tiny", "Q4_K_M"),
                                          ("qwen35moe-tiny", "Q4_K_PURE")])
def test_hybrid_stacks(tiny, preset, ftype):
    """Qwen3.5: attention Q/K(/V), the DeltaNet input projections and (MoE) the router with the
    shared expert's gate, each stacked by type; `fuse_qkv` alone asks for the attention ones only."""
    path = tiny(preset, ftype, by="synth")
    full, qkv_only = zinc.api.load(path, backend=StackAll()), zinc.api.load(path, backend=StackQKV())
    assert _stacked(full) == _expected(path, ["attn", "delta", "ffn"])
    assert _stacked(qkv_only) == _expected(path, ["attn"])
    cfg = full.config
    delta = [s for il, ss in _stacked(full).items() if cfg.is_recurrent(il) for s in ss if "ffn" not in s]
    assert delta and all(s.endswith("attn_gate+ssm_beta+ssm_alpha") for s in delta)
    if cfg.n_expert:
        assert sum(s == "ffn_gate_inp+ffn_gate_inp_shexp" for ss in _stacked(full).values() for s in ss) == cfg.n_layer
        lw = full.weights.layer(0)
        assert lw.stack_of("ffn_gate_inp_shexp").rows == (cfg.n_expert, 1)


def _stepwise(m, ids, n_prefill):
    cache = m.new_cache()
    rows = [m.forward(ids[:n_prefill], cache)]
    rows += [m.forward([t], cache) for t in ids[n_prefill:]]
    return np.concatenate(rows)


@pytest.mark.parametrize("preset,ftype", [("qwen3-tiny", "Q4_K_M"), ("qwen35-tiny", "Q4_K_M"),
                                          ("qwen35-tiny", "F32"), ("qwen35moe-tiny", "Q4_K_M"),
                                          ("qwen35moe-tiny", "Q4_K_PURE"), ("gemma4-tiny", "Q8_0")])
def test_stacked_logits_equal_unstacked(tiny, prompt, preset, ftype):
    """A prompt of 70 tokens (two delta-net chunks) then 6 decode steps: the same logits."""
    path = tiny(preset, ftype, by="synth")
    plain, stacked = zinc.api.load(path, backend="cpu", n_ctx=128), zinc.api.load(path, backend=StackAll(), n_ctx=128)
    assert _stacked(stacked)
    ids = prompt(plain.n_vocab, 76, seed=3)
    want, got = _stepwise(plain, ids, 70), _stepwise(stacked, ids, 70)
    # float32 sums of one stacked matmul against three: BLAS-dependent order; gemma4-tiny Q8_0 (softcapped logits)
    # measured 1.8e-4 of the largest logit on one CI machine (2e-5 elsewhere); a wrong stack is off by O(1)
    tol = 5e-4 if preset == "gemma4-tiny" else 2e-5
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * np.abs(want).max())
    assert (got.argmax(-1) == want.argmax(-1)).all()
