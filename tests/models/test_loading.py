"""Config.from_gguf per architecture, the registry, and load-time errors that name what is wrong."""

from __future__ import annotations

import numpy as np
import pytest

import zinc.api
from zinc.backends.base import BaseOps
from zinc.backends.cpu import CpuOps
from zinc.errors import BackendUnavailableError, GGUFError, UnsupportedModelError
from zinc.gguf import GGUFFile, GGUFWriter
from zinc.models import Config, get_architecture, supported_architectures


def copy_gguf(src, dst, drop=(), meta=None, drop_meta=()):
    """Rewrite a GGUF without some tensors / with some metadata changed."""
    meta = meta or {}
    with GGUFFile(src) as g:
        w = GGUFWriter(dst)
        for k, v in g.metadata.items():
            if k in drop_meta:
                continue
            if k in meta:
                w.add(k, meta[k])
            else:
                w.add(k, v, g.metadata_types[k])
        for k, v in meta.items():
            if k not in g.metadata:
                w.add(k, v)
        for name, info in g.tensors.items():
            if name not in drop:
                w.add_tensor(name, info.shape, info.ggml_type, np.array(g.raw(name)))
        w.write()
    return dst


def test_supported_architectures():
    assert {"llama", "qwen3", "qwen3moe", "gemma3"} <= set(supported_architectures())


@pytest.mark.parametrize("preset,arch", [("llama3-tiny", "llama"), ("qwen3-tiny", "qwen3"),
                                         ("qwen3moe-tiny", "qwen3moe"), ("gemma3-tiny", "gemma3")])
def test_config_from_gguf(preset, arch, tiny):
    from zinc.synth import get_preset

    p = get_preset(preset)
    with GGUFFile(tiny(preset)) as g:
        cfg = Config.from_gguf(g)
    assert cfg.arch == arch
    assert (cfg.n_embd, cfg.n_layer, cfg.n_head, cfg.n_head_kv, cfg.head_dim) == (
        p.n_embd, p.n_layer, p.n_head, p.n_head_kv, p.head_dim)
    assert cfg.n_vocab == p.n_vocab
    assert cfg.rope.mode == ("norm" if arch == "llama" else "neox")
    assert cfg.qk_norm == (arch != "llama")
    if arch == "qwen3moe":
        assert (cfg.n_expert, cfg.n_expert_used, cfg.n_ff_exp, cfg.expert_norm_w) == (
            p.n_expert, p.n_expert_used, p.n_ff_exp, True)
    if arch == "gemma3":
        assert cfg.swa_layers == tuple(p.is_swa(i) for i in range(p.n_layer))
        assert cfg.n_swa == p.n_swa and cfg.act == "gelu" and cfg.post_norms
        assert cfg.rope.freq_base == p.rope_base and cfg.rope_swa.freq_base == p.rope_base_swa
        assert cfg.embed_scale == pytest.approx(np.sqrt(p.n_embd))
        assert cfg.q_scale == pytest.approx(1 / np.sqrt(p.head_dim)) and cfg.kq_scale == 1.0
    else:
        assert cfg.kq_scale == pytest.approx(1 / np.sqrt(p.head_dim))


def test_gemma3_swa_pattern_key(tiny, tmp_path):
    path = copy_gguf(tiny("gemma3-tiny"), tmp_path / "g.gguf", meta={"gemma3.attention.sliding_window_pattern": 3})
    with GGUFFile(path) as g:
        assert Config.from_gguf(g).swa_layers == (True, True, False, True, True, False)
    path = copy_gguf(tiny("gemma3-tiny"), tmp_path / "g2.gguf",
                     meta={"gemma3.attention.sliding_window_pattern": [True, False, True, False, True, False]})
    with GGUFFile(path) as g:
        assert Config.from_gguf(g).swa_layers == (True, False, True, False, True, False)


def test_unsupported_architecture_is_named(tmp_path):
    w = GGUFWriter(tmp_path / "m.gguf")
    w.add("general.architecture", "mamba2")
    w.add_tensor("token_embd.weight", (4, 32), "F32", np.zeros((4, 32), np.float32))
    w.write()
    with pytest.raises(UnsupportedModelError, match="'mamba2'"):
        zinc.api.load(tmp_path / "m.gguf")
    with pytest.raises(UnsupportedModelError, match="mamba2"):
        get_architecture("mamba2")


def test_missing_tensor_is_named(tiny, tmp_path):
    path = copy_gguf(tiny("qwen3-tiny"), tmp_path / "q.gguf", drop={"blk.2.ffn_down.weight"})
    with pytest.raises(GGUFError, match=r"blk\.2\.ffn_down\.weight") as e:
        zinc.api.load(path)
    assert "missing" in str(e.value)


def test_wrong_shape_is_named(tiny, tmp_path):
    path = copy_gguf(tiny("llama3-tiny"), tmp_path / "l.gguf", meta={"llama.feed_forward_length": 384})
    with pytest.raises(GGUFError, match=r"blk\.0\.ffn_gate\.weight.*shape"):
        zinc.api.load(path)


def test_missing_metadata_is_named(tiny, tmp_path):
    path = copy_gguf(tiny("qwen3-tiny"), tmp_path / "q.gguf", drop_meta={"qwen3.embedding_length"})
    with pytest.raises(GGUFError, match="qwen3.embedding_length"):
        zinc.api.load(path)


def test_tied_output_uses_embeddings(tiny):
    m = zinc.api.load(tiny("gemma3-tiny"))
    assert m.weights["output.weight"] is m.weights["token_embd.weight"]


def test_capability_check_lists_missing_pairs(tiny):
    class NoK(CpuOps):
        name = "nok"

        def capabilities(self):
            caps = super().capabilities()
            return {op: frozenset(t for t in ts if t.name != "Q4_K") for op, ts in caps.items()}

    with pytest.raises(BackendUnavailableError, match=r"matmul x Q4_K") as e:
        zinc.api.load(tiny("qwen3-tiny", "Q4_K_M", by="synth"), backend=NoK())
    assert "nok" in str(e.value)
    assert isinstance(NoK(), BaseOps)


def test_unknown_backend(tiny):
    from zinc.backends import get_backend

    with pytest.raises(BackendUnavailableError, match="'nope'"):
        get_backend("nope")
    with pytest.raises(BackendUnavailableError, match="'nope'"):
        zinc.api.load(tiny("qwen3-tiny"), backend="nope")


class _FusingCpu(CpuOps):
    fuse_qkv = True


@pytest.mark.parametrize("preset,ftype", [("qwen3-tiny", "Q4_K_M"), ("qwen35-tiny", "F32"), ("gemma4-tiny", "Q8_0")])
def test_fused_qkv_projections(tiny, preset, ftype):
    """A backend with `fuse_qkv` gets one stacked Q/K/V weight per layer where the three share a type
    (Q4_K_M mixes Q4_K and Q6_K: elsewhere Q and K only), and the same logits."""
    path = tiny(preset, ftype, by="synth")
    plain, fused = zinc.api.load(path, backend="cpu"), zinc.api.load(path, backend=_FusingCpu())
    names = fused.weights.tensors
    stacked = [n for n in names if n.endswith("attn_q+attn_k+attn_v.weight")]
    assert stacked and all(n.replace("attn_q+attn_k+attn_v", "attn_q") not in names for n in stacked)
    if ftype == "Q4_K_M":  # a layer whose V has another type: Q and K stacked, V alone
        assert any(n.endswith("attn_q+attn_k.weight") for n in names) and any(n.endswith("attn_v.weight") for n in names)
    ids = [int(i) for i in np.random.default_rng(1).integers(0, plain.n_vocab, 12)]
    want, got = plain.logits(ids), fused.logits(ids)
    # float32 sums in another order (BLAS-dependent): gemma4-tiny Q8_0 measured 1.8e-4 on one CI machine
    assert np.abs(got - want).max() <= (5e-4 if preset == "gemma4-tiny" else 1e-4) * np.abs(want).max()
