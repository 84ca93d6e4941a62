"""Fixtures for the model tests: tiny synthetic models (F32 and quantized), metrics, the parity table.

`tiny(preset, ftype)` returns a cached path: F32 files come from `zinc.synth`; other types are either
quantized by llama.cpp (`by="llama.cpp"`, needs the oracle) or written by zinc.synth's own quantizer
(`by="synth"`, no oracle needed); `vocab=` a vocab GGUF gives the model that real vocabulary. Parity
rows recorded through `parity_table` and timings through `timing_table` are printed at the end of
the run (pytest's terminal summary).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from zinc.testing.compare import log_softmax

ARCH_PRESETS = ["llama3-tiny", "qwen3-tiny", "qwen3moe-tiny", "gemma3-tiny"]
PARITY_ROWS: list[dict] = []
TIMING_ROWS: list[str] = []


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny-models")
    made: dict[tuple[str, str, str], Path] = {}

    def get(preset: str, ftype: str = "F32", by: str = "llama.cpp", vocab: Path | None = None) -> Path:
        key = (preset, ftype.upper(), by if ftype.upper() != "F32" else "synth", str(vocab or ""))
        if key in made:
            return made[key]
        from zinc.synth import write_model

        tag = f"-{Path(vocab).stem}" if vocab else ""
        path = root / f"{preset}-{key[1]}-{key[2]}{tag}.gguf"
        if key[1] == "F32" or by == "synth":
            write_model(path, preset, ftype=key[1], seed=0, vocab=vocab)
        else:
            from zinc.testing import oracle

            oracle.quantize(get(preset, "F32", vocab=vocab), path, key[1])
        made[key] = path
        return path

    return get


@pytest.fixture(scope="session")
def twin(tmp_path_factory):
    """The dequantized twin (every tensor converted to F32 by llama.cpp) of a file, cached."""
    root = tmp_path_factory.mktemp("twins")
    made: dict[Path, Path] = {}

    def get(path: Path) -> Path:
        if path not in made:
            from zinc.testing import oracle

            made[path] = oracle.dequantized_twin(path, root / (Path(path).stem + "-twin.gguf"))
        return made[path]

    return get


def compare_logits(ref: np.ndarray, ours: np.ndarray, margin: float = 0.05) -> dict:
    """Per-position metrics of `ours` against the reference `ref` (both (T, n_vocab))."""
    lp, lq = log_softmax(ref), log_softmax(ours)
    kl = (np.exp(lp) * (lp - lq)).sum(axis=-1)
    top2 = np.sort(ref, axis=-1)[:, -2:]
    clear = (top2[:, 1] - top2[:, 0]) >= margin
    agree = ref.argmax(-1) == ours.argmax(-1)
    return {"kl_mean": float(kl.mean()), "kl_max": float(kl.max()), "agree": float(agree.mean()),
            "agree_clear": float(agree[clear].mean()) if clear.any() else 1.0, "n_clear": int(clear.sum()),
            "max_abs": float(np.abs(ref - ours).max()), "n": len(ref)}


@pytest.fixture(scope="session")
def metrics():
    return compare_logits


@pytest.fixture(scope="session")
def parity_table():
    """Call with a dict row (arch, quant, twin metrics, normal-run metrics) to add it to the summary."""
    return PARITY_ROWS.append


@pytest.fixture(scope="session")
def timing_table():
    """Call with a line of text (e.g. a timing) to print it in the run's summary."""
    return TIMING_ROWS.append


def pytest_terminal_summary(terminalreporter):
    if TIMING_ROWS:
        terminalreporter.section("zinc NumPy backend timings")
        for line in TIMING_ROWS:
            terminalreporter.write_line(line)
    if not PARITY_ROWS:
        return
    tr = terminalreporter
    tr.section("zinc vs llama.cpp logits (64-token prompts)")
    tr.write_line(f"{'model':<27}{'quant':<10}| {'twin: agree':>11} {'clear':>6} {'KL mean':>9} {'KL max':>9} "
                  f"{'max|d|':>8} | {'normal: agree':>13} {'KL mean':>9} {'max|d|':>8}")
    for r in PARITY_ROWS:
        t, n = r["twin"], r.get("normal")
        line = (f"{r['model']:<27}{r['quant']:<10}| {t['agree']:>11.3f} {t['agree_clear']:>6.3f} {t['kl_mean']:>9.2e} "
                f"{t['kl_max']:>9.2e} {t['max_abs']:>8.1e} |")
        if n:
            line += f" {n['agree']:>13.3f} {n['kl_mean']:>9.2e} {n['max_abs']:>8.1e}"
        if r.get("note"):
            line += f"  {r['note']}"
        tr.write_line(line)


def prompt_ids(n_vocab: int, n: int = 64, seed: int = 0) -> list[int]:
    return [int(i) for i in np.random.default_rng(seed).integers(0, n_vocab, n)]


@pytest.fixture(scope="session")
def prompt():
    return prompt_ids
