"""Recorded Vulkan decode steps (replay.py) against steps run eagerly and against the NumPy backend,
and the device greedy loop built on them (`VulkanOps.greedy_steps`, used by `Model.greedy`: each
replayed step's argmax feeds the next step on the GPU, the ids are read once at the end).

The engine's prompt caching on those steps (a cache cut back in place, prompt chunks at any position); sequences
decoding together (`Model.forward_seqs`).
As in test_vulkan.py, the GPU work runs in a child process (`python test_vulkan_steps.py <group>`,
conftest's `vulkan_child`) that prints one JSON object: case -> metrics (or an error string); locally
that is lavapipe.
"""

from __future__ import annotations

import json
import sys
import tempfile
import traceback
from pathlib import Path

import numpy as np
import pytest

from zinc.testing.compare import compare_logits

# replayed decode steps (VulkanOps.run_step) against the same steps run eagerly: full attention (also
# over 600 cells: attention in 3 splits), a sliding-window ring that wraps (n_ubatch 4: 19 cells for
# a window of 16), shared-KV layers, MoE, recurrent state
REPLAY_CASES = ["qwen3-tiny:Q4_K_M", "qwen3-tiny:Q4_K_M:600", "gemma3-tiny:Q4_K_M", "gemma4-tiny:Q4_K_M",
                "gpt-oss-tiny:MXFP4_MOE", "qwen35-tiny:Q4_K_M", "host_read_refused"]
# the device greedy loop: a dense model, a hybrid one (recurrent state), one with sliding-window rings
GREEDY_PRESETS = ["qwen3-tiny", "qwen35-tiny", "gemma3-tiny"]
GREEDY_STEPS = 12


def _err(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-30)) if a.shape == b.shape else float("inf")


def _replay_case(case: str, tmp: Path) -> dict:
    """Decode on two caches (one reset midway) with replays on and off, and on the NumPy backend:
    28 steps on the first cache (past the window, around the ring), reset, 4 more, 5 on a new cache
    from position 0, 2 more on the first one again."""
    import zinc
    from zinc.synth import write_model

    if case == "host_read_refused":
        return _replay_refused_case(tmp)
    preset, ftype, n_ctx = (case + ":64").split(":")[:3]  # 600 cells: attention in 3 splits
    path = tmp / f"{preset}-{ftype}.gguf"
    write_model(path, preset, ftype=ftype, seed=3)
    ids = [int(i) for i in np.random.default_rng(4).integers(3, 200, 40)]
    out, res = {}, {}
    for label in ("ref", "eager", "replay"):
        m = zinc.load(path, backend="cpu" if label == "ref" else "vulkan", n_ctx=int(n_ctx), n_ubatch=4,
                      **({} if label == "ref" else {"allow_cpu_adapter": True}))
        if label != "ref":
            m.ops.replay = label == "replay"
        a = m.new_cache()
        got = [m.forward(ids[:3], a)] + [m.forward([i], a) for i in ids[3:28]]
        a.reset()
        got += [m.forward(ids[:2], a)] + [m.forward([i], a) for i in ids[2:6]]
        b = m.new_cache()
        got += [m.forward([i], b) for i in ids[:5]] + [m.forward([i], a) for i in ids[6:8]]
        out[label] = np.concatenate(got)
        if label == "replay":
            r = m.ops._replayer
            res.update(records=r.records, replays=r.replays, refused=len(r.refused))
    res.update(compare_logits(out["replay"], out["ref"]))
    res["replay_vs_eager"] = _err(out["replay"], out["eager"])
    res["eager_vs_ref"] = _err(out["eager"], out["ref"])
    return res


def _replay_refused_case(tmp: Path) -> dict:
    """A step that reads a result back to the host mid-step cannot be replayed: it runs eagerly."""
    from types import SimpleNamespace

    import zinc
    from zinc.synth import write_model

    path = tmp / "refused.gguf"
    write_model(path, "qwen3-tiny", ftype="Q4_K_M", seed=5)
    ids = [int(i) for i in np.random.default_rng(6).integers(3, 200, 8)]
    out = {}
    for label in ("ref", "replay"):
        m = zinc.load(path, backend="cpu" if label == "ref" else "vulkan", n_ctx=32,
                      **({} if label == "ref" else {"allow_cpu_adapter": True}))
        arch, reads = m.arch, []

        def reading_forward(ops, cfg, weights, batch, cache, arch=arch, reads=reads):
            y = arch.forward(ops, cfg, weights, batch, cache)
            reads.append(ops.to_numpy(ops.scale(y, 1.0)).shape)
            return y
        m.arch = SimpleNamespace(forward=reading_forward, cache_layout=arch.cache_layout)  # not the module
        cache = m.new_cache()
        out[label] = np.concatenate([m.forward(ids[:2], cache)] + [m.forward([i], cache) for i in ids[2:]])
    r = m.ops._replayer
    return {"records": r.records, "replays": r.replays, "refused": len(r.refused), "reads": len(reads),
            "replay_vs_eager": _err(out["replay"], out["ref"]), **compare_logits(out["replay"], out["ref"])}


def _greedy_case(vk, preset: str, tmp: Path) -> dict:
    from zinc.api import load
    from zinc.synth import write_model

    path = tmp / f"{preset}.gguf"
    write_model(path, preset, ftype="Q4_K_M", seed=11)
    m = load(path, backend=vk, n_ctx=96)
    prompt = [int(i) for i in np.random.default_rng().integers(1, 500, 5)]
    want_cache, got_cache = m.new_cache(), m.new_cache()
    m.forward(prompt[:-1], want_cache)
    m.forward(prompt[:-1], got_cache)
    tok, want = prompt[-1], []
    for _ in range(GREEDY_STEPS):
        tok = int(np.argmax(m.forward([tok], want_cache, last_only=True)[-1]))
        want.append(tok)
    got = m.greedy(prompt[-1], got_cache, GREEDY_STEPS)
    n_past = [want_cache.n_past, got_cache.n_past]
    after = [float(np.abs(m.forward([want[-1]], want_cache, last_only=True)
                          - m.forward([got[-1]], got_cache, last_only=True)).max())]
    got_cache.reset()  # the same cache again (recurrent state zeroed in place): the recording is reused
    m.forward(prompt[:-1], got_cache)
    again = m.greedy(prompt[-1], got_cache, GREEDY_STEPS)
    return {"want": want, "got": got, "again": again, "n_past": n_past,
            "after_diff": after[0], "replays": vk._replayer.replays}


def _prompt_cache_case(vk, preset: str, tmp: Path) -> dict:
    """The engine's prompt caching on Vulkan (greedy chunks on the device): `prompt_cache_follow_ups`, as the CUDA
    test runs it."""
    from zinc.api import load
    from zinc.synth import write_model
    from zinc.testing.compare import prompt_cache_follow_ups

    path = tmp / f"pc-{preset}.gguf"
    write_model(path, preset, ftype="Q8_0", seed=9)
    return prompt_cache_follow_ups(load(path, backend=vk, n_ctx=128, n_ubatch=16),
                                   load(path, backend="cpu", n_ctx=128, n_ubatch=16))


def _seqs_case(vk, preset: str, tmp: Path) -> dict:
    """Sequences decoding together (`Model.forward_seqs`: shared ops on all rows, each sequence's attention or
    recurrent state on its own rows, `concat_rows`) against the NumPy backend's, one sequence and three."""
    from zinc.api import load
    from zinc.synth import write_model

    path = tmp / f"seqs-{preset}.gguf"
    write_model(path, preset, ftype="Q8_0", seed=13)
    ms = [load(path, backend=b, n_ctx=64) for b in (vk, "cpu")]
    rng = np.random.default_rng(14)
    out: dict = {}
    for n in (1, 3):
        prompts = [rng.integers(1, 500, int(k)).tolist() for k in rng.integers(3, 30, n)]
        caches = [[m.new_cache() for _ in prompts] for m in ms]
        for m, cs in zip(ms, caches):
            for p, c in zip(prompts, cs):
                m.forward(p[:-1], c)
        last, got, want = [p[-1] for p in prompts], [], []
        for _ in range(3):
            got.append(ms[0].forward_seqs([([t], c) for t, c in zip(last, caches[0])]))
            want.append(ms[1].forward_seqs([([t], c) for t, c in zip(last, caches[1])]))
            last = np.argmax(want[-1], -1).tolist()
        out[n] = compare_logits(np.concatenate(got), np.concatenate(want))
    return out


def _child(group: str) -> dict:
    """Run one group of cases on a fresh device; {"unavailable": reason} when there is none."""
    from zinc.backends import get_backend
    from zinc.errors import BackendUnavailableError

    try:
        vk = get_backend("vulkan", allow_cpu_adapter=True)
    except BackendUnavailableError as e:
        return {"unavailable": str(e)}
    results: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        cases = {"replay": REPLAY_CASES, "greedy": GREEDY_PRESETS, "prompt_cache": GREEDY_PRESETS,
                 "seqs": GREEDY_PRESETS}[group]
        for name in cases:
            try:
                results[name] = (_replay_case(name, Path(tmp)) if group == "replay"
                                 else _greedy_case(vk, name, Path(tmp)) if group == "greedy"
                                 else _seqs_case(vk, name, Path(tmp)) if group == "seqs"
                                 else _prompt_cache_case(vk, name, Path(tmp)))
            except Exception:  # noqa: BLE001 - reported to the parent, which fails that case
                results[name] = traceback.format_exc()
    return results


# ------------------------------------------------------------------------------------------ parent side


@pytest.fixture(scope="module")
def replays(vulkan_child) -> dict:
    return vulkan_child(__file__, "replay")


@pytest.fixture(scope="module")
def greedy(vulkan_child) -> dict:
    return vulkan_child(__file__, "greedy", timeout=600)


@pytest.mark.slow
@pytest.mark.parametrize("case", REPLAY_CASES)
def test_replayed_decode_matches_eager(replays, case):
    r = replays[case]
    assert not isinstance(r, str), r
    if case == "host_read_refused":  # every step ran the model code (and its host read) eagerly
        assert r["refused"] == 1 and r["replays"] == 0 and r["reads"] == 7, r
        assert r["argmax_agree"] == 1.0 and r["mean_kl"] <= 1e-3, r
        return
    assert r["refused"] == 0 and r["replays"] >= 30, r  # the decode steps did replay
    assert r["replay_vs_eager"] == 0.0, r  # the same dispatches on the same buffers: the same bits
    assert r["argmax_agree"] == 1.0 and r["mean_kl"] <= 1e-3, r


@pytest.mark.parametrize("preset", GREEDY_PRESETS)
def test_device_greedy_loop(greedy, preset):
    r = greedy[preset]
    assert not isinstance(r, str), r
    assert r["got"] == r["want"], r
    assert r["again"] == r["want"], r
    assert r["n_past"][0] == r["n_past"][1], r
    assert r["after_diff"] == 0.0, r  # the next step after the loop sees the same cache
    assert r["replays"] > 2 * GREEDY_STEPS, r  # the loop replayed recorded steps (not one forward per token)


@pytest.fixture(scope="module")
def prompt_cache(vulkan_child) -> dict:
    return vulkan_child(__file__, "prompt_cache", timeout=600)


@pytest.mark.parametrize("preset", GREEDY_PRESETS)
def test_engine_prompt_cache(prompt_cache, preset):
    """The next turn keeps all of the first request's cache (37 + 4 tokens); the prompt that leaves the reply
    keeps the 37 shared ones where the cache can be cut (not recurrent state, not rings of 16 + 16 - 1 cells
    that moved 25 tokens past them); every token chosen is the NumPy backend's argmax or within 0.05 of it."""
    r = prompt_cache[preset]
    assert not isinstance(r, str), r
    assert r["next"]["cached"] == r["p"] + 4, r
    assert r["cut"]["cached"] == (r["p"] if preset == "qwen3-tiny" else 0), r
    assert r["next"]["gap"] <= 0.05 and r["cut"]["gap"] <= 0.05, r


@pytest.fixture(scope="module")
def seqs(vulkan_child) -> dict:
    return vulkan_child(__file__, "seqs", timeout=600)


@pytest.mark.parametrize("preset", GREEDY_PRESETS)
def test_forward_seqs(seqs, preset):
    r = seqs[preset]
    assert not isinstance(r, str), r
    for n in ("1", "3"):
        assert r[n]["argmax_agree"] == 1.0 and r[n]["mean_kl"] <= 1e-3, (n, r)


if __name__ == "__main__":
    print(json.dumps(_child(sys.argv[1])), flush=True)
