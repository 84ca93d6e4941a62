"""A MoE layer's shared expert folded into the routed stacks at load (`layers.fold_shared_experts`) for a
backend that asks: which layers fold, the stacks' shapes and bytes, and logits equal to the unfolded
model's (prompt and decode). The NumPy backend is the oracle; the subclasses only set the GPU flags."""

from __future__ import annotations

import numpy as np
import pytest

import zinc.api
from zinc.backends.cpu import CpuOps
from zinc.gguf import GGUFFile


class Fold(CpuOps):
    fold_shared_experts = 1 << 30  # every step takes the folded form, prompts too


class FoldAndStack(CpuOps):  # what the CUDA backend asks for: decode steps (up to 4 rows) folded
    fold_shared_experts = 4
    fuse_projections = True


def _stepwise(m, ids, n_prefill):
    cache = m.new_cache()
    rows = [m.forward(ids[:n_prefill], cache)]
    rows += [m.forward([t], cache) for t in ids[n_prefill:]]
    return np.concatenate(rows)


@pytest.mark.parametrize("ftype", ["Q4_K_M", "Q8_0", "F32"])
def test_folded_stacks(tiny, ftype):
    """Every qwen35moe-tiny layer folds (its shared expert has the routed experts' types and shape):
    E + 1 experts per stack whose last expert holds the shared expert's bytes; the shexp weights are
    uploaded alone too (for the steps too long to fold)."""
    path = tiny("qwen35moe-tiny", ftype, by="synth")
    m = zinc.api.load(path, backend=Fold(), n_ctx=64)
    cfg = m.config
    assert len(m.weights.folded) == 3 * cfg.n_layer
    with GGUFFile(path) as g:
        for il in range(cfg.n_layer):
            lw = m.weights.layer(il)
            assert lw.shared_expert_folded() and lw.has("ffn_up_shexp")
            for part in ("gate", "up", "down"):
                st = lw[f"ffn_{part}_exps"]
                assert st.shape[0] == cfg.n_expert + 1
                assert f"blk.{il}.ffn_{part}_shexp.weight" in m.weights.tensors
                sh = np.asarray(g.raw(f"blk.{il}.ffn_{part}_shexp.weight")).reshape(-1)
                ex = np.asarray(g.raw(f"blk.{il}.ffn_{part}_exps.weight")).reshape(-1)
                np.testing.assert_array_equal(st.qt.data[ex.size:], sh)
                np.testing.assert_array_equal(st.qt.data[:ex.size], ex)
    plain = zinc.api.load(path, backend="cpu", n_ctx=64)
    assert not plain.weights.folded and not plain.weights.layer(0).shared_expert_folded()


def test_no_fold_where_types_or_shapes_differ():
    """Per layer: a shared down projection of another type, a shared GLU width other than the experts',
    a bias, or no shared gate keeps that layer unfolded; a backend that does not ask folds nothing."""
    from types import SimpleNamespace as NS

    from zinc.gguf.constants import GGMLType as T
    from zinc.models.base import TensorSpec
    from zinc.models.layers import fold_shared_experts

    E, F, D = 4, 32, 64
    tensors, names = {}, []

    def add(name, ty, shape):
        tensors[name] = NS(ggml_type=ty, shape=shape)
        names.append(name)

    for il in range(5):
        p = f"blk.{il}."
        add(p + "ffn_gate_inp_shexp.weight", T.F32, (D,)) if il != 3 else None
        for m in ("gate", "up", "down"):
            shape = (F, D) if m != "down" else (D, F)
            add(f"{p}ffn_{m}_exps.weight", T.Q4_K, (E, *shape))
            ty = T.Q6_K if (il == 1 and m == "down") else T.Q4_K
            add(f"{p}ffn_{m}_shexp.weight", ty, (2 * F, D) if (il == 2 and m == "up") else shape)
        if il == 4:
            add(p + "ffn_up_shexp.bias", T.F32, (F,))
    gguf = NS(tensors=tensors)
    present = [TensorSpec(n, tuple(tensors[n].shape)) for n in names]
    assert fold_shared_experts(Fold(), gguf, present) == ["blk.0."]
    assert fold_shared_experts(CpuOps(), gguf, present) == []


@pytest.mark.parametrize("backend,ftype", [(Fold, "Q4_K_M"), (FoldAndStack, "Q4_K_M"), (FoldAndStack, "Q8_0")])
def test_folded_logits_equal_unfolded(tiny, prompt, backend, ftype):
    """A prompt of 70 tokens then 6 decode steps: the folded model's logits are the unfolded one's (Fold:
    prompt and steps folded; FoldAndStack: the prompt with the shared expert's own weights, the steps folded)."""
    path = tiny("qwen35moe-tiny", ftype, by="synth")
    plain, folded = zinc.api.load(path, backend="cpu", n_ctx=128), zinc.api.load(path, backend=backend(), n_ctx=128)
    assert folded.weights.folded
    ids = prompt(plain.n_vocab, 76, seed=5)
    want, got = _stepwise(plain, ids, 70), _stepwise(folded, ids, 70)
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-5 * np.abs(want).max())
    assert (got.argmax(-1) == want.argmax(-1)).all()


def test_router_topk_shared_default():
    """BaseOps' router_topk_shared: the top-k of router_topk, then expert E with weight sigmoid(gate)."""
    ops = CpuOps()
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((5, 11)).astype(np.float32)
    gate = rng.standard_normal((5, 1)).astype(np.float32)
    ids, w = ops.router_topk(logits, 3, "softmax", True, 1.0)
    ids2, w2 = ops.router_topk_shared(logits, 3, "softmax", True, 1.0, gate)
    assert ids2.shape == (5, 4) and w2.dtype == np.float32 and ids2.dtype == np.int32
    np.testing.assert_array_equal(ids2[:, :3], ids)
    np.testing.assert_array_equal(ids2[:, 3], 11)
    np.testing.assert_array_equal(w2[:, :3], w)
    np.testing.assert_allclose(w2[:, 3], 1 / (1 + np.exp(-gate[:, 0].astype(np.float64))), rtol=1e-6)
