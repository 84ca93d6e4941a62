"""`zinc run` in subprocesses: a streamed completion with its timing summary, reproducible seeds,
chat mode, the interactive session on stdin, backend and model errors, and (slow) the embedded
Gemma 3 270M continuing "The capital of France is"."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from zinc.synth import write_model

REPO = Path(__file__).resolve().parents[1]


def zinc(*args: str, home: Path, stdin: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZINC_")}
    env["ZINC_HOME"] = str(home)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "zinc.cli", *args], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=REPO, input=stdin if stdin is not None else "")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return write_model(tmp_path_factory.mktemp("m") / "qwen3-tiny.gguf", "qwen3-tiny", ftype="Q4_K_M").path


def _summary(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def _prompt_tokens(stderr: str) -> int:
    m = re.search(r"zinc: prompt (\d+) tok", stderr)
    assert m, stderr
    return int(m.group(1))


def test_run_prompt_streams_and_summarises(tiny, tmp_path):
    r = zinc("run", "-m", str(tiny), "--prompt", "Hello world", "-n", "12", "--seed", "3", home=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() and r.stdout.endswith("\n")
    last = _summary(r.stderr)
    assert last.startswith("zinc: prompt ") and "tok/s" in last and "generated" in last and "finish" in last
    again = zinc("run", "-m", str(tiny), "--prompt", "Hello world", "-n", "12", "--seed", "3", home=tmp_path)
    assert again.stdout == r.stdout  # same seed, same text


def test_run_greedy_length_and_chat(tiny, tmp_path):
    r = zinc("run", "-m", str(tiny), "-p", "Once upon a time", "-n", "5", "--temp", "0", home=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "generated" in _summary(r.stderr) and ("finish length" in r.stderr or "finish stop" in r.stderr)
    r = zinc("run", "-m", str(tiny), "--prompt", "Hi", "--chat", "-n", "6", "--seed", "1", home=tmp_path)
    assert r.returncode == 0, r.stderr
    plain = zinc("run", "-m", str(tiny), "--prompt", "Hi", "-n", "6", "--seed", "1", home=tmp_path)
    assert _prompt_tokens(r.stderr) > _prompt_tokens(plain.stderr) + 5  # the template wraps the prompt


def test_run_interactive_session_reads_stdin(tiny, tmp_path):
    r = zinc("run", "-m", str(tiny), "-n", "4", "--seed", "1", home=tmp_path,
             stdin="Hello\n/reset\nHow are you?\n/exit\nnever read\n")
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("zinc: prompt ") == 2 and "conversation cleared" in r.stderr
    r = zinc("run", "-m", str(tiny), "-n", "4", "--no-chat", "--seed", "1", home=tmp_path, stdin="Hello\n")
    assert r.returncode == 0 and r.stderr.count("zinc: prompt ") == 1


def test_run_errors(tiny, tmp_path):
    # CI has no GPU: asking for cuda explicitly is a clear error (never a silent CPU fallback)
    r = zinc("run", "-m", str(tiny), "--prompt", "hi", "--backend", "cuda", home=tmp_path)
    assert r.returncode == 1 and r.stdout == ""
    assert re.search(r"backend 'cuda'.*(no CUDA device|needs torch|not implemented)", r.stderr), r.stderr
    r = zinc("run", "-m", str(tmp_path / "missing.gguf"), "--prompt", "hi", home=tmp_path)
    assert r.returncode == 1 and "no such model file" in r.stderr
    r = zinc("run", "-m", "qwen3-8b", "--prompt", "hi", home=tmp_path)
    assert r.returncode == 1 and "zinc model pull qwen3-8b" in r.stderr
    r = zinc("run", "-m", str(tiny), "--prompt", "hi", "--top-p", "2", home=tmp_path)
    assert r.returncode != 0 and "top_p" in r.stderr
    r = zinc("run", "--help", home=tmp_path)
    assert r.returncode == 0 and "--prompt" in r.stdout and "--backend" in r.stdout


@pytest.mark.slow
def test_run_embedded_gemma_continues(gemma3_270m, tmp_path):
    r = zinc("run", "--prompt", "The capital of France is", "-n", "16", "--temp", "0", home=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "embedded default" in r.stderr and "gemma" in r.stderr
    assert len(r.stdout.split()) >= 3, r.stdout
    assert "Paris" in r.stdout or "capital" in r.stdout
    assert "generated 16 tok" in _summary(r.stderr)
