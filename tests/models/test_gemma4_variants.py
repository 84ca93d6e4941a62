"""Gemma 4's E-variant features on the tiny model: per-layer embeddings (PLE) and shared-KV layers.

zinc.synth writes neither, so the tiny F32 model is rewritten here with `embedding_length_per_layer_input`
> 0 and the PLE tensors added, and/or `attention.shared_kv_layers` > 0 with the shared layers' K/V
tensors removed (llama.cpp does not need them either). Checked against llama.cpp and for decode.
"""

from __future__ import annotations

import numpy as np
import pytest

import zinc.api
from zinc.gguf import GGUFFile, GGUFWriter
from zinc.gguf.constants import GGMLType, GGUFValueType as VT

DP = 32
SHARED = 3  # tiny layers: swa T T F T T F -> n_kv = 3; layers 3, 4 read layer 1, layer 5 reads layer 2


def gemma4_variant(src, dst, ple: int = 0, shared: int = 0, seed: int = 0):
    rng = np.random.default_rng(seed)
    with GGUFFile(src) as g:
        D, L = int(g.metadata["gemma4.embedding_length"]), int(g.metadata["gemma4.block_count"])
        V = int(g.tensors["token_embd.weight"].shape[0])
        w = GGUFWriter(dst)
        for k, v in g.metadata.items():
            if k == "gemma4.embedding_length_per_layer_input":
                w.add(k, ple, VT.UINT32)
            elif k == "gemma4.attention.shared_kv_layers":
                w.add(k, shared, VT.UINT32)
            else:
                w.add(k, v, g.metadata_types[k])
        skip = {f"blk.{il}.{t}.weight" for il in range(L - shared, L) for t in ("attn_k", "attn_v", "attn_k_norm")}
        for name, info in g.tensors.items():
            if name not in skip:
                w.add_tensor(name, info.shape, info.ggml_type, np.array(g.raw(name)))

    def f32(shape, std=0.02, one=False):
        x = rng.standard_normal(shape).astype(np.float32) * np.float32(std)
        return x + np.float32(1) if one else x

    if ple:
        w.add_tensor("per_layer_token_embd.weight", (V, ple * L), GGMLType.F32, f32((V, ple * L), 0.05))
        w.add_tensor("per_layer_model_proj.weight", (ple * L, D), GGMLType.F32, f32((ple * L, D)))
        w.add_tensor("per_layer_proj_norm.weight", (ple,), GGMLType.F32, f32((ple,), 0.05, True))
        for il in range(L):
            w.add_tensor(f"blk.{il}.inp_gate.weight", (ple, D), GGMLType.F32, f32((ple, D)))
            w.add_tensor(f"blk.{il}.proj.weight", (D, ple), GGMLType.F32, f32((D, ple)))
            w.add_tensor(f"blk.{il}.post_norm.weight", (D,), GGMLType.F32, f32((D,), 0.05, True))
    w.write()
    return dst


VARIANTS = {"ple": dict(ple=DP), "shared-kv": dict(shared=SHARED), "ple+shared-kv": dict(ple=DP, shared=SHARED)}


@pytest.fixture(scope="module")
def variant(tiny, tmp_path_factory):
    root = tmp_path_factory.mktemp("gemma4-variants")
    made = {}

    def get(name):
        if name not in made:
            made[name] = gemma4_variant(tiny("gemma4-tiny", "F32"), root / f"{name}.gguf", **VARIANTS[name])
        return made[name]

    return get


def test_config_and_cache_layout(variant):
    m = zinc.api.load(variant("ple+shared-kv"), n_ctx=64)
    cfg = m.config
    assert cfg.n_embd_per_layer == DP
    assert cfg.kv_source == (0, 1, 2, 1, 1, 2)
    assert [lk is None for lk in m.new_cache().layers] == [False] * 3 + [True] * 3


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variant_matches_llama_cpp(name, variant, metrics, prompt, parity_table):
    from zinc.testing import oracle

    path = variant(name)
    m = zinc.api.load(path, n_ctx=256)
    ids = prompt(m.n_vocab, 64)
    ref = oracle.logits(path, ids)[0]
    t = metrics(ref, m.logits(ids))
    parity_table({"model": f"gemma4-tiny/{name}", "quant": "F32", "twin": t})
    assert t["n_clear"] >= 8 and t["agree_clear"] == 1.0, t
    assert t["kl_mean"] <= 1e-7, t


@pytest.mark.oracle
def test_features_change_the_logits(variant, tiny, metrics, prompt):
    """Each feature moves the logits far past the parity bound (so the parity above is not vacuous)."""
    ids = prompt(512, 64)
    base = zinc.api.load(tiny("gemma4-tiny", "F32"), n_ctx=256).logits(ids)
    for name in VARIANTS:
        assert metrics(base, zinc.api.load(variant(name), n_ctx=256).logits(ids))["kl_mean"] > 1e-5


@pytest.mark.parametrize("name", ["ple+shared-kv"])
def test_variant_decode_equals_prefill(name, variant, prompt):
    m = zinc.api.load(variant(name), n_ctx=128, n_ubatch=24, gelu="exact")
    ids = prompt(m.n_vocab, 80, seed=7)
    full = zinc.api.load(variant(name), n_ctx=128, gelu="exact").logits(ids)
    cache = m.new_cache()
    step = np.concatenate([m.forward(ids[:50], cache)] + [m.forward([t], cache) for t in ids[50:]])
    np.testing.assert_allclose(step, full, rtol=0, atol=2e-5 * np.abs(full).max())
