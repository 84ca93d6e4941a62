"""`zinc bench`: the JSON schema and table from a subprocess on a tiny synthetic model, test names with
depth, the synth preset and quant detection, and the correctness check that refuses a wrong model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from zinc.api import load
from zinc.errors import ZincError
from zinc.bench import BenchError, format_table, run_bench, synth_preset, verify
from zinc.synth import write_model

REPO = Path(__file__).resolve().parents[1]


def zinc(*args: str, home: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZINC_")}
    env["ZINC_HOME"] = str(home)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "zinc.cli", *args], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=REPO)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return write_model(tmp_path_factory.mktemp("m") / "llama3-tiny.gguf", "llama3-tiny", ftype="Q4_K_M").path


def test_bench_json_schema(tiny, tmp_path):
    r = zinc("bench", "-m", str(tiny), "-p", "16", "-n", "4", "-d", "0,8", "-r", "2", "--json", home=tmp_path)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["model"] == "llama3-tiny.gguf" and res["preset"] == "llama3-tiny" and res["quant"] == "Q4_K_M"
    assert res["backend"] == "cpu" and isinstance(res["device"], str) and res["device"]
    assert res["date"][:2] == "20" and "T" in res["date"]
    assert res["verify"]["ok"] and res["verify"]["max_rel_err"] < 1e-3
    assert [t["name"] for t in res["tests"]] == ["pp16", "tg4", "pp16@d8", "tg4@d8"]
    for t in res["tests"]:
        assert t["tok_s"] > 0 and t["tok_s_sd"] >= 0 and len(t["samples_s"]) == 2
    assert "verified" in r.stderr and "run 2/2" in r.stderr  # progress on stderr


def test_bench_table(tiny, tmp_path):
    r = zinc("bench", "-m", str(tiny), "-p", "8", "-n", "0", "-r", "1", home=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("| model") and "t/s" in lines[0] and "pp8" in r.stdout and "tg" not in r.stdout
    assert " ± " in lines[2]


def test_run_bench_in_process_and_bad_settings(tiny):
    m = load(tiny, n_ctx=64)
    try:
        res = run_bench(m, n_prompt=[8], n_gen=[2], repetitions=1, warmup=False)
        assert [t["name"] for t in res["tests"]] == ["pp8", "tg2"] and res["tests"][0]["tok_s_sd"] == 0.0
        assert "pp8" in format_table(res)
        with pytest.raises(BenchError, match="context"):
            run_bench(m, n_prompt=[60], n_gen=[], depths=[16])
        with pytest.raises(BenchError):
            run_bench(m, n_prompt=[0], n_gen=[0])
        assert synth_preset(m.metadata) == "llama3-tiny" and synth_preset({"general.name": "Llama"}) is None
    finally:
        m.close()


def test_verify_refuses_a_wrong_forward(tiny):
    m = load(tiny, n_ctx=64)
    real = m.forward

    def broken(ids, cache, last_only=False):  # decode steps drift: the incremental path is wrong
        out = real(ids, cache, last_only=last_only)
        return out + (np.float32(5.0) if len(ids) == 1 else np.float32(0.0))

    try:
        assert verify(m)["ok"]
        m.forward = broken
        with pytest.raises(BenchError, match="differ"):
            verify(m)
    finally:
        m.close()


def test_verify_moe_rechecks_on_exact_numerics(tmp_path):
    """A model with routed experts that differs only on default numerics (routing flips at near ties)
    is checked again with exact ones; a step that is wrong with exact numerics too is still refused."""
    path = write_model(tmp_path / "qwen3moe-tiny.gguf", "qwen3moe-tiny", ftype="Q8_0").path
    m = load(path, n_ctx=64)
    m.ops.exact, m.ops.graphs_enabled = False, True  # what the CUDA backend has (the CPU one has neither)
    real = m.forward

    def noisy(ids, cache, last_only=False):  # decode steps drift only on the default numerics
        out = real(ids, cache, last_only=last_only)
        return out + (np.float32(5.0) if len(ids) == 1 and not m.ops.exact else np.float32(0.0))

    try:
        m.forward = noisy
        res = verify(m)
        assert res["ok"] and res["numerics"] == "exact" and not res["default_numerics"]["ok"]
        assert m.ops.exact is False and m.ops.graphs_enabled is True  # restored
        m.forward = lambda ids, cache, last_only=False: real(ids, cache, last_only) + np.float32(len(ids) == 1) * 5
        with pytest.raises(BenchError, match="differ"):
            verify(m)
    finally:
        m.close()


def test_greedy_is_forward_then_argmax(tiny):
    """Model.greedy (what tg times) chooses what one-step forwards + argmax choose, and advances the cache."""
    m = load(tiny, n_ctx=64)
    try:
        ids = m.tokenize("a b c d")
        want_cache, got_cache = m.new_cache(64), m.new_cache(64)
        m.forward(ids[:-1], want_cache)
        m.forward(ids[:-1], got_cache)
        tok, want = ids[-1], []
        for _ in range(9):
            tok = int(np.argmax(m.forward([tok], want_cache, last_only=True)[-1]))
            want.append(tok)
        assert m.greedy(ids[-1], got_cache, 9) == want
        assert got_cache.n_past == want_cache.n_past == len(ids) + 8
        with pytest.raises(ZincError, match="context is full"):
            m.greedy(want[-1], got_cache, 64)
    finally:
        m.close()


def test_greedy_seqs_is_forward_seqs_then_argmax(tiny):
    """Model.greedy_seqs (what tg{N}x{B} times) chooses what each sequence's own greedy steps choose, advances
    every cache, and refuses a step past a cache's context or with a first token missing."""
    m = load(tiny, n_ctx=64)
    try:
        prompts = [m.tokenize(t) for t in ("a b c d", "hello there", "x")]
        alone, together = ([m.new_cache(40 + 8 * i) for i in range(3)] for _ in range(2))
        for p, a, b in zip(prompts, alone, together):
            m.forward(p[:-1], a)
            m.forward(p[:-1], b)
        want = [m.greedy(p[-1], c, 7) for p, c in zip(prompts, alone)]
        got = m.greedy_seqs([p[-1] for p in prompts], together, 7)
        assert got.shape == (3, 7) and got.tolist() == want
        assert [c.n_past for c in together] == [c.n_past for c in alone] == [len(p) + 6 for p in prompts]
        assert m.greedy_seqs([1, 2, 3], together, 0).shape == (3, 0)
        with pytest.raises(ZincError, match="context is full"):
            m.greedy_seqs([1, 2, 3], together, 35)
        with pytest.raises(ValueError, match="one first token per cache"):
            m.greedy_seqs([1, 2], together, 2)
        assert [c.n_past for c in together] == [len(p) + 6 for p in prompts]  # the refused calls changed nothing
    finally:
        m.close()


def test_bench_kv_type(tiny, tmp_path):
    """--kv-type reaches the backend: the JSON names the cells' type, and the check still passes on q8_0 cells."""
    r = zinc("bench", "-m", str(tiny), "--backend", "cpu", "--kv-type", "q8_0", "-p", "8", "-n", "4", "-r", "1",
             "--json", home=tmp_path)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["kv_type"] == "q8_0" and res["verify"]["ok"], res["verify"]
    bad = zinc("bench", "-m", str(tiny), "--kv-type", "q4_0", home=tmp_path)
    assert bad.returncode == 2 and "--kv-type" in bad.stderr and "q4_0" in bad.stderr


def _kv_cell_bytes(m) -> list[tuple[int, int]]:
    """(bytes of one cell, window) of the KV layer each attention layer reads."""
    from zinc.engine.cache import LayerCacheSpec
    from zinc.options import KV_BYTES

    layout = m.arch.cache_layout(m.config)
    out = []
    for il, s in enumerate(layout):
        s = s if s is not None else layout[m.config.kv_layer(il)]
        if isinstance(s, LayerCacheSpec):
            out.append((s.n_head_kv * (s.head_dim_k + s.head_dim_v) * KV_BYTES[m.ops.kv_dtype], s.window))
    return out


@pytest.mark.parametrize("preset", ["llama3-tiny", "gemma3-tiny", "qwen3moe-tiny", "qwen35-tiny"])
def test_decode_bytes(preset, tmp_path):
    """A decode step's bytes: the weights once (the embedding table one row unless it is the output head, routed
    expert stacks n_expert_used / n_expert of them), the cells up to each step's position within each layer's
    window, a recurrent layer's state read and written."""
    from zinc.bench import decode_bytes

    m = load(write_model(tmp_path / f"{preset}.gguf", preset, ftype="Q8_0").path, n_ctx=64)
    try:
        cfg, ts = m.config, m.gguf.tensors
        emb = ts["token_embd.weight"]
        weights = sum(t.nbytes for t in ts.values())
        if "output.weight" in ts:
            weights -= emb.nbytes - emb.nbytes / emb.shape[0]
        exps = sum(t.nbytes for n, t in ts.items() if "_exps." in n)
        assert (exps > 0) == (preset == "qwen3moe-tiny")
        if exps:
            weights -= exps * (1 - cfg.n_expert_used / cfg.n_expert)
        state = sum(2 * s.nbytes for s in m.arch.cache_layout(cfg) if hasattr(s, "conv_kernel"))
        assert (state > 0) == (preset == "qwen35-tiny")
        cells = _kv_cell_bytes(m)
        # one step at position 0 reads one cell a layer
        assert decode_bytes(m, 0, 1) == pytest.approx(weights + state + sum(c for c, _ in cells), abs=2)
        # 4 steps after 8 tokens: cells 9..12, 10.5 on average (or the window's, if shorter)
        want = weights + state + sum(c * np.mean([min(p, w) if w > 0 else p for p in range(9, 13)])
                                     for c, w in cells)
        assert decode_bytes(m, 8, 4) == pytest.approx(want, abs=2)
        windows = [w for _, w in cells if w > 0]
        assert bool(windows) == (preset == "gemma3-tiny")
        if windows:  # past the windows only the full-attention layers' reads grow
            far = max(windows) + 10
            full = sum(c for c, w in cells if w == 0)
            assert decode_bytes(m, far + 100, 1) - decode_bytes(m, far, 1) == pytest.approx(100 * full, abs=2)
    finally:
        m.close()


def test_bench_reports_bandwidth(tiny):
    """A tg test carries the bytes a step reads and the GB/s they make at its speed; the table shows them."""
    from zinc.bench import decode_bytes

    m = load(tiny, n_ctx=64)
    try:
        res = run_bench(m, n_prompt=[8], n_gen=[3], depths=[0, 4], repetitions=1, warmup=False)
        pp, tg, _, tg4 = res["tests"]
        assert "GB_s" not in pp and tg["bytes_per_token"] == decode_bytes(m, 0, 3)
        assert tg4["bytes_per_token"] > tg["bytes_per_token"]
        assert tg["GB_s"] == pytest.approx(tg["bytes_per_token"] * tg["tok_s"] / 1e9)
        table = format_table(res).splitlines()
        assert table[0].rstrip(" |").endswith("GB/s") and table[3].rstrip(" |").endswith(f"{tg['GB_s']:.1f}")
    finally:
        m.close()


def test_parallel_decode_test(tiny, tmp_path):
    """`--parallel B`: tg N decoded in B sequences at once after their prompts; checked against each alone first;
    a wrong batched step is refused; the CLI's JSON carries the test."""
    m = load(tiny, n_ctx=64)
    try:
        res = run_bench(m, n_prompt=[], n_gen=[3], repetitions=2, warmup=False, parallel=[1, 5], parallel_prompt=6)
        par = [t for t in res["tests"] if "n_seqs" in t]
        assert [t["name"] for t in par] == ["tg3x1", "tg3x5"] and [t["n_seqs"] for t in par] == [1, 5]
        assert all(t["tok_s"] > 0 and len(t["samples_s"]) == 2 and t["depth"] == 6 for t in par)
        assert res["verify"]["seqs"]["max_rel_err"] < 1e-3 and res["verify"]["seqs"]["argmax_agreement"] == 1.0
        with pytest.raises(BenchError, match="context"):
            run_bench(m, n_prompt=[], n_gen=[8], parallel=[2], parallel_prompt=60)
        real = m.forward_seqs
        m.forward_seqs = lambda items, argmax=False: real(items, argmax)[::-1]  # sequences mixed up
        with pytest.raises(BenchError, match="together"):
            run_bench(m, n_prompt=[], n_gen=[2], repetitions=1, warmup=False, parallel=[2], parallel_prompt=6)
    finally:
        m.close()
    r = zinc("bench", "-m", str(tiny), "-p", "0", "-n", "2", "--parallel", "3", "--parallel-prompt", "5", "-r", "1",
             "--json", home=tmp_path)
    assert r.returncode == 0, r.stderr
    assert [t["name"] for t in json.loads(r.stdout)["tests"]] == ["tg2", "tg2x3"]
