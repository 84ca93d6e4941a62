"""Config.from_gguf for qwen35 / qwen35moe / gpt-oss / gemma4: every quirk read from the metadata."""

from __future__ import annotations

import numpy as np
import pytest

import zinc.api
from zinc.gguf import GGUFFile
from zinc.models import Config, supported_architectures
from zinc.synth import get_preset


def _cfg(tiny, preset):
    with GGUFFile(tiny(preset)) as g:
        return Config.from_gguf(g)


def test_registered():
    assert {"qwen35", "qwen35moe", "gemma4", "gpt-oss"} <= set(supported_architectures())


@pytest.mark.parametrize("preset", ["qwen35-tiny", "qwen35moe-tiny"])
def test_qwen35_config(preset, tiny):
    p, cfg = get_preset(preset), _cfg(tiny, preset)
    assert cfg.recurrent_layers == tuple(p.is_recurrent(i) for i in range(p.n_layer))
    assert (cfg.ssm_state, cfg.ssm_k_heads, cfg.ssm_v_heads, cfg.ssm_conv_kernel) == (
        p.ssm_state, p.ssm_groups, p.ssm_v_heads, p.ssm_conv)
    assert cfg.rope.mode == "imrope" and cfg.rope.sections == p.rope_sections and cfg.rope.n_dims == p.n_rot
    assert cfg.attn_gate and cfg.qk_norm and cfg.kq_scale == pytest.approx(1 / np.sqrt(p.head_dim))
    if p.n_expert:
        assert (cfg.n_expert, cfg.n_expert_used, cfg.n_ff_exp, cfg.n_ff_shexp) == (
            p.n_expert, p.n_expert_used, p.n_ff_exp, p.n_ff_shexp)
        assert cfg.expert_gating == "softmax" and cfg.expert_norm_w


def test_gpt_oss_config(tiny):
    p, cfg = get_preset("gpt-oss-tiny"), _cfg(tiny, "gpt-oss-tiny")
    assert cfg.swa_layers == tuple(i % 2 == 0 for i in range(p.n_layer)) and cfg.n_swa == p.n_swa
    assert cfg.rope.mode == "neox" and cfg.rope.ext_factor == 1.0
    assert cfg.rope.freq_scale == pytest.approx(1 / p.yarn[0]) and cfg.rope.n_ctx_orig == p.yarn[1]
    assert cfg.rope_swa.freq_base == cfg.rope.freq_base and cfg.rope_swa.freq_scale == cfg.rope.freq_scale
    assert cfg.act == "swiglu_oai" and cfg.expert_gating == "softmax_weight" and not cfg.expert_norm_w
    assert cfg.head_dim == p.rot and cfg.kq_scale == pytest.approx(1 / np.sqrt(p.rot))


@pytest.mark.parametrize("preset", ["gemma4-tiny", "gemma4moe-tiny"])
def test_gemma4_config(preset, tiny):
    p, cfg = get_preset(preset), _cfg(tiny, preset)
    swa = tuple(p.is_swa(i) for i in range(p.n_layer))
    assert cfg.swa_layers == swa and cfg.n_swa == p.n_swa
    assert cfg.layer_head_dim == tuple(p.layer_head_dim(i) for i in range(p.n_layer))
    assert cfg.layer_n_head_kv == tuple(p.layer_kv_heads(i) for i in range(p.n_layer))
    assert cfg.rope.n_dims == p.head_dim and cfg.rope.freq_base == p.rope_base
    assert cfg.rope_swa.n_dims == p.n_rot_swa and cfg.rope_swa.freq_base == p.rope_base_swa
    assert cfg.kq_scale == 1.0 and cfg.q_scale == 1.0 and cfg.v_norm and cfg.final_softcap == p.softcap
    assert cfg.embed_scale == pytest.approx(np.sqrt(p.n_embd)) and cfg.kv_source == ()
    assert cfg.moe_layers == ((True,) * p.n_layer if p.n_expert else ())
    m = zinc.api.load(tiny(preset), n_ctx=64)
    assert not m.weights.get("blk.2.attn_v.weight") and m.weights.get("blk.0.attn_v.weight")  # K-as-V on globals
