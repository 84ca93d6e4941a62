"""The real Gemma 3 270M Q4_K_M file against llama.cpp: teacher-forced logits and greedy continuations.

Both are held to llama.cpp on the dequantized twin (f32 KV, flash attention off), the exact reference.
llama.cpp's normal run on the quantized file (8-bit activations inside its matmuls, repacked weights)
is reported next to it: it differs from its own twin by about as much as from zinc.
"""

from __future__ import annotations

import numpy as np
import pytest

import zinc.api

PROMPTS = [
    "The capital of France is",
    "Once upon a time, in a small village by the sea,",
    "def fibonacci(n):\n    ",
    "The three primary colors are",
    "Water boils at a temperature of",
]
N_GEN = 32

pytestmark = [pytest.mark.oracle, pytest.mark.slow]


@pytest.fixture(scope="module")
def gemma(gemma3_270m):
    return zinc.api.load(gemma3_270m, n_ctx=256)


@pytest.fixture(scope="module")
def gemma_twin(gemma3_270m, tmp_path_factory):
    from zinc.testing import oracle

    return oracle.dequantized_twin(gemma3_270m, tmp_path_factory.mktemp("g3") / "gemma3-270m-twin.gguf")


def test_teacher_forced_logits(gemma, gemma_twin, gemma3_270m, metrics, parity_table):
    from zinc.testing import oracle

    with oracle.LlamaCppModel(gemma_twin) as ref_twin, \
            oracle.LlamaCppModel(gemma3_270m) as ref_q:
        for i, text in enumerate(PROMPTS):
            ids = gemma.tokenize(text) + [int(t) for t in np.random.default_rng(i).integers(3, 20000, 24)]
            ours = gemma.logits(ids)
            t, n = metrics(ref_twin.logits(ids), ours), metrics(ref_q.logits(ids), ours)
            parity_table({"model": f"gemma3-270m #{i}", "quant": "Q4_K_M", "twin": t, "normal": n})
            assert t["agree_clear"] == 1.0 and t["kl_mean"] <= 1e-4, (text, t)


def zinc_greedy(m, ids: list[int], n: int) -> list[int]:
    cache = m.new_cache()
    out = [int(np.argmax(m.forward(ids, cache, last_only=True)[-1]))]
    while len(out) < n:
        out.append(int(np.argmax(m.forward([out[-1]], cache)[-1])))
    return out


def _first_divergence(a: list[int], b: list[int]) -> int | None:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)


def zinc_divergence(m, ids: list[int], ref: list[int]) -> int | None:
    """Where zinc's m.logits-driven greedy continuation of `ids` first leaves `ref` (None: never).

    Greedy decoding equals `ref` up to step j iff the teacher-forced argmax over ids + ref[:-1]
    reproduces ref[:j], so one forward pass answers it exactly.
    """
    picks = m.logits(ids + ref[:-1]).argmax(-1)[len(ids) - 1:]
    return _first_divergence([int(t) for t in picks], ref)


def test_greedy_continuations(gemma, gemma3_270m, gemma_twin, capsys):
    """zinc's greedy tokens equal llama.cpp's on the twin; the normal quantized run is reported."""
    same, report = 0, []
    from zinc.testing import oracle

    twin_m, normal_m = oracle.LlamaCppModel(gemma_twin), oracle.LlamaCppModel(gemma3_270m)
    twin_run, normal_run = twin_m.greedy, normal_m.greedy
    for i, text in enumerate(PROMPTS):
        ids = gemma.tokenize(text)
        ref, normal = twin_run(ids, N_GEN), normal_run(ids, N_GEN)
        d_twin, d_norm = zinc_divergence(gemma, ids, ref), zinc_divergence(gemma, ids, normal)
        d_self = _first_divergence(ref, normal)
        if i == 0:  # once end to end through the KV cache, one token at a time
            assert _first_divergence(zinc_greedy(gemma, ids, N_GEN), ref) == d_twin
        same += d_twin is None
        report.append(f"{text[:28]!r:32} vs twin: {_say(d_twin)}; vs normal run: {_say(d_norm)} "
                      f"(llama.cpp twin vs normal: {_say(d_self)})\n      {gemma.detokenize(ref)!r}")
    twin_m.close()
    normal_m.close()
    with capsys.disabled():
        print("\nGemma 3 270M Q4_K_M, greedy 32 tokens, zinc vs llama.cpp:\n  " + "\n  ".join(report))
    assert same >= 4, report


def _say(d: int | None) -> str:
    return "equal" if d is None else f"diverges at {d}"
