"""The `zinc` command, run in subprocesses: --check verdicts and exit codes (good model, corrupt file,
unsupported architecture, does not fit, warnings, JSON), `model list|pull|use|active|rm` against a
local HTTP server, `inspect`, help, and the serve/chat usage."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from zinc.synth import write_model
from zinc.gguf import GGUFWriter

REPO = Path(__file__).resolve().parents[1]


def _fileserver_module():
    spec = importlib.util.spec_from_file_location("zinc_test_fileserver", REPO / "tests" / "catalog" / "conftest.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def zinc(*args: str, home: Path, endpoint: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZINC_")}
    env["ZINC_HOME"] = str(home)
    if endpoint:
        env["ZINC_ENDPOINT"] = endpoint
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "zinc.cli", *args], capture_output=True, text=True,
                          env=env, timeout=timeout, cwd=REPO)


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("models")
    good = write_model(d / "qwen3-tiny.gguf", "qwen3-tiny", ftype="Q4_K_M").path
    unsupported = d / "mamba2.gguf"  # an architecture zinc does not implement
    w = GGUFWriter(unsupported)
    w.add("general.architecture", "mamba2")
    w.add("mamba2.block_count", 1)
    w.add_tensor("token_embd.weight", (8, 32), "F32", np.ones((8, 32), np.float32))
    w.write()
    data = Path(good).read_bytes()
    corrupt = d / "corrupt.gguf"
    corrupt.write_bytes(data[: len(data) // 3])  # truncated: tensor data runs past the end
    garbage = d / "garbage.gguf"
    garbage.write_bytes(b"GGUF" + bytes(range(256)) * 4)
    return {"good": Path(good), "unsupported": Path(unsupported), "corrupt": corrupt, "garbage": garbage}


# -- --check ------------------------------------------------------------------------------------

def test_check_good_model(models, tmp_path):
    r = zinc("--check", "-m", str(models["good"]), home=tmp_path)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    for part in ("Host", "Python", "RAM", "Backends", "cpu", "cuda", "vulkan", "qwen3 (supported)",
                 "Q4_K", "KV cache", "weights"):
        assert part in out, part
    assert out.strip().splitlines()[-1] == "READY [OK]"


def test_check_json(models, tmp_path):
    r = zinc("--check", "-m", str(models["good"]), "--json", home=tmp_path)
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["verdict"] == "READY" and rep["tag"] == "OK" and rep["problems"] == []
    assert {b["name"] for b in rep["backends"]} == {"cpu", "cuda", "vulkan"}
    cpu = next(b for b in rep["backends"] if b["name"] == "cpu")
    assert cpu["available"] and cpu["implemented"]
    for b in rep["backends"]:
        assert b["available"] or b["reason"]  # an unavailable backend always says why
    m = rep["model"]
    assert m["architecture"] == "qwen3" and m["file_type"] == "Q4_K_M" and "Q4_K" in m["quant_mix"]
    mem = rep["memory"]
    assert mem["n_ctx"] == 4096 and mem["weights"] == m["weights_bytes"]
    # the KV cache from the GGUF's attention shape: layers × kv heads × (key + value) × ctx × f16
    per_token = sum(h * (m["key_length"] + m["value_length"]) for h in m["head_count_kv"])
    assert per_token > 0 and mem["kv_cache"] == per_token * 4096 * 2 and mem["kv_type"] == "f16"
    assert mem["total"] == mem["weights"] + mem["kv_cache"] + mem["overhead"]
    q8 = json.loads(zinc("--check", "-m", str(models["good"]), "--json", "-c", "8192", "--kv-type", "q8_0",
                         home=tmp_path).stdout)["memory"]
    assert q8["kv_type"] == "q8_0" and q8["kv_cache"] == per_token * 8192 * 34 // 32  # 32 int8 + an f16 scale


def test_check_corrupt_file(models, tmp_path):
    for name in ("corrupt", "garbage"):
        r = zinc("--check", "-m", str(models[name]), home=tmp_path)
        assert r.returncode == 1, r.stdout
        assert "corrupt or unreadable GGUF" in r.stdout and str(models[name]) in r.stdout
        assert r.stdout.strip().splitlines()[-1] == "NOT READY [FAIL]"


def test_check_unsupported_architecture(models, tmp_path):
    r = zinc("--check", "-m", str(models["unsupported"]), home=tmp_path)
    assert r.returncode == 1
    assert "architecture 'mamba2' is not supported" in r.stdout
    assert r.stdout.strip().endswith("NOT READY [FAIL]")


def test_check_does_not_fit(models, tmp_path):
    r = zinc("--check", "-m", str(models["good"]), "-c", str(2**30), "--json", home=tmp_path)
    assert r.returncode == 1
    rep = json.loads(r.stdout)
    assert rep["verdict"] == "NOT READY" and any("does not fit" in p for p in rep["problems"])


def test_check_warning_context_too_long(models, tmp_path):
    r = zinc("--check", "-m", str(models["good"]), "-c", "8192", home=tmp_path)
    assert r.returncode == 0
    assert "longer than the model's trained context" in r.stdout
    assert r.stdout.strip().endswith("READY WITH WARNINGS [WARN]")


def test_check_missing_model_and_unavailable_backend(models, tmp_path):
    r = zinc("--check", "--model-id", "qwen3-8b", home=tmp_path)
    assert r.returncode == 1 and "not installed" in r.stdout and "NOT READY [FAIL]" in r.stdout
    r = zinc("--check", "-m", str(tmp_path / "nope.gguf"), home=tmp_path)
    assert r.returncode == 1 and "no such file" in r.stdout
    cuda_ok = importlib.util.find_spec("torch") is not None
    if not cuda_ok:
        r = zinc("--check", "-m", str(models["good"]), "--backend", "cuda", home=tmp_path)
        assert r.returncode == 1 and "backend cuda is not available" in r.stdout


def test_check_usage_errors(tmp_path):
    r = zinc("--check", "-m", "a.gguf", "--model-id", "qwen3-8b", home=tmp_path)
    assert r.returncode == 2 and "not both" in r.stderr


# -- zinc model ... ------------------------------------------------------------------------------

@pytest.fixture
def server():
    mod = _fileserver_module()
    s = mod.FileServer()
    try:
        yield s
    finally:
        s.close()


def test_model_commands(server, tmp_path):
    data = np.random.default_rng(7).integers(0, 256, size=200_000, dtype=np.uint8).tobytes()
    server.files["/Qwen/Qwen3-8B-GGUF/resolve/main/Qwen3-8B-Q4_K_M.gguf"] = data
    server.httpd.etag = True  # the catalog has no hash for this file: the server publishes one
    home = tmp_path / "home"

    r = zinc("model", "list", home=home, endpoint=server.url)
    assert r.returncode == 0 and "qwen3-8b" not in r.stdout
    r = zinc("model", "list", "--all", "--json", home=home, endpoint=server.url)
    rows = {row["id"]: row for row in json.loads(r.stdout)}
    for mid in ("qwen3-8b", "qwen3.5-9b", "qwen3.5-35b-a3b", "qwen3.6-35b-a3b", "gemma4-31b",
                "gemma4-26b-a4b", "gpt-oss-20b", "gemma3-270m"):
        assert mid in rows
    assert rows["qwen3-8b"]["installed"] is False and rows["qwen3-8b"]["url"].startswith(server.url)
    assert set(rows["qwen3-8b"]) >= {"family", "quant", "size", "fits", "installed", "active"}

    r = zinc("model", "pull", "qwen3-8b", home=home, endpoint=server.url)
    assert r.returncode == 0, r.stderr
    path = Path(r.stdout.strip())
    assert path.read_bytes() == data and path.is_relative_to(home)
    assert hashlib.sha256(data).hexdigest() in r.stderr  # verified against the published hash

    r = zinc("model", "use", "qwen3-8b", home=home)
    assert r.returncode == 0 and "qwen3-8b" in r.stdout
    r = zinc("model", "active", "--json", home=home)
    assert json.loads(r.stdout) == {"id": "qwen3-8b", "default": False, "path": str(path)}
    r = zinc("model", "list", home=home)
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("qwen3-8b"))
    assert "yes" in line and line.rstrip().endswith("*")

    r = zinc("model", "rm", "qwen3-8b", home=home)
    assert r.returncode == 0 and not path.exists()
    r = zinc("model", "active", home=home)
    assert "qwen3-8b" not in r.stdout


def test_model_command_errors(server, tmp_path):
    r = zinc("model", "pull", "gemma4-31b", home=tmp_path, endpoint=server.url)
    assert r.returncode == 1 and "HTTP 404" in r.stderr
    r = zinc("model", "pull", "../../etc/passwd", home=tmp_path, endpoint=server.url)
    assert r.returncode == 1 and "invalid model id" in r.stderr
    r = zinc("model", "use", "qwen3-8b", home=tmp_path)
    assert r.returncode == 1 and "not installed" in r.stderr
    r = zinc("model", "rm", "nope", home=tmp_path)
    assert r.returncode == 1 and "unknown model id" in r.stderr
    r = zinc("model", "pull", "qwen3-8b", home=tmp_path, endpoint="ftp://x")
    assert r.returncode != 0 and "endpoint" in r.stderr
    assert not any(tmp_path.rglob("*.gguf"))


# -- inspect, help, stubs ------------------------------------------------------------------------

def test_inspect(models, tmp_path):
    r = zinc("inspect", str(models["good"]), home=tmp_path)
    assert r.returncode == 0 and "general.architecture = 'qwen3'" in r.stdout
    r = zinc("inspect", "--json", str(models["good"]), home=tmp_path)
    assert json.loads(r.stdout)["tensors"]
    r = zinc("inspect", str(models["garbage"]), home=tmp_path)
    assert r.returncode == 1 and "error" in r.stderr


def test_help_and_version(tmp_path):
    for args in (["--help"], ["model", "--help"], ["model", "pull", "--help"], ["inspect", "--help"],
                 ["run", "--help"]):
        r = zinc(*args, home=tmp_path)
        assert r.returncode == 0 and "usage" in r.stdout, args
    r = zinc("--version", home=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("zinc ")


@pytest.mark.parametrize("cmd", ["serve", "chat"])
def test_serve_chat_usage(cmd, tmp_path):
    r = zinc(cmd, "--help", home=tmp_path)
    assert r.returncode == 0 and "--api-key" in r.stdout and "127.0.0.1" in r.stdout
    r = zinc(cmd, "--prompt", "hi", home=tmp_path)
    assert r.returncode == 2 and "unrecognized arguments" in r.stderr and r.stdout == ""
