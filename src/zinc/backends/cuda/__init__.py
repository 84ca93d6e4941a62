"""The CUDA backend (torch + Triton). Importing it needs torch and triton and a CUDA device;
`load()` raises `BackendUnavailableError` with the reason when one is missing."""

from __future__ import annotations

from typing import Any

from zinc.errors import BackendUnavailableError


def make_cuda_ops(**options: Any) -> Any:
    """A `CudaOps` (the registry's factory for "cuda")."""
    try:
        import torch
        import triton  # noqa: F401
    except ImportError as e:
        raise BackendUnavailableError(
            f"backend 'cuda' needs torch and triton (pip install 'zinc-llm[cuda]'): {e}") from e
    device = options.get("device")
    if (device is None or str(device).startswith("cuda")) and not torch.cuda.is_available():
        raise BackendUnavailableError("backend 'cuda': torch sees no CUDA device")
    from zinc.backends.cuda.ops import CudaOps

    return CudaOps(**options)


__all__ = ["make_cuda_ops"]
