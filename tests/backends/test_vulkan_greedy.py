"""The Vulkan backend's device greedy loop (`VulkanOps.greedy_steps`, used by `Model.greedy`): each
replayed step's argmax feeds the next step on the GPU and the ids are read once at the end. It must
choose what one-step forwards plus a host argmax choose, leave the cache where those leave it, and
work again on a reused cache (the recording replayed from its first step).

As in test_vulkan.py, the GPU work runs in a child process (`python test_vulkan_greedy.py`) that prints
one JSON object: preset -> result (or an error string); locally that is lavapipe.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import traceback

import numpy as np
import pytest

# a dense model, a hybrid one (recurrent state), one with sliding-window ring caches
PRESETS = ["qwen3-tiny", "qwen35-tiny", "gemma3-tiny"]
STEPS = 12


def _case(vk, preset: str, tmp: str) -> dict:
    from zinc.api import load
    from zinc.synth import write_model

    path = os.path.join(tmp, f"{preset}.gguf")
    write_model(path, preset, ftype="Q4_K_M", seed=11)
    m = load(path, backend=vk, n_ctx=96)
    prompt = [int(i) for i in np.random.default_rng().integers(1, 500, 5)]
    want_cache, got_cache = m.new_cache(), m.new_cache()
    m.forward(prompt[:-1], want_cache)
    m.forward(prompt[:-1], got_cache)
    tok, want = prompt[-1], []
    for _ in range(STEPS):
        tok = int(np.argmax(m.forward([tok], want_cache, last_only=True)[-1]))
        want.append(tok)
    got = m.greedy(prompt[-1], got_cache, STEPS)
    n_past = [want_cache.n_past, got_cache.n_past]
    after = [float(np.abs(m.forward([want[-1]], want_cache, last_only=True)
                          - m.forward([got[-1]], got_cache, last_only=True)).max())]
    got_cache.reset()  # the same cache again (recurrent state zeroed in place): the recording is reused
    m.forward(prompt[:-1], got_cache)
    again = m.greedy(prompt[-1], got_cache, STEPS)
    return {"want": want, "got": got, "again": again, "n_past": n_past,
            "after_diff": after[0], "replays": vk._replayer.replays}


def _child() -> dict:
    from zinc.backends import get_backend
    from zinc.errors import BackendUnavailableError

    try:
        vk = get_backend("vulkan", allow_cpu_adapter=True)
    except BackendUnavailableError as e:
        return {"unavailable": str(e)}
    results: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        for preset in PRESETS:
            try:
                results[preset] = _case(vk, preset, tmp)
            except Exception:  # noqa: BLE001 - reported to the parent, which fails that case
                results[preset] = traceback.format_exc()
    return results


@pytest.fixture(scope="module")
def results() -> dict:
    pytest.importorskip("wgpu", reason="wgpu is not installed (pip install 'zinc-llm[vulkan]')")
    env = {**os.environ, "XDG_RUNTIME_DIR": tempfile.gettempdir()}
    r = subprocess.run([sys.executable, __file__], capture_output=True, text=True, timeout=600, env=env)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if r.returncode != 0 or not lines:
        pytest.fail(f"vulkan child exited with {r.returncode}:\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}")
    res = json.loads(lines[-1])
    if "unavailable" in res:
        pytest.skip(f"no usable Vulkan adapter: {res['unavailable']}")
    return res


@pytest.mark.parametrize("preset", PRESETS)
def test_device_greedy_loop(results, preset):
    r = results[preset]
    assert not isinstance(r, str), r
    assert r["got"] == r["want"], r
    assert r["again"] == r["want"], r
    assert r["n_past"][0] == r["n_past"][1], r
    assert r["after_diff"] == 0.0, r  # the next step after the loop sees the same cache
    assert r["replays"] > 2 * STEPS, r  # the loop replayed recorded steps (not one forward per token)


if __name__ == "__main__":
    print(json.dumps(_child()))
