"""Compute backends: the op interface (`base`) and its implementations, chosen by name.

`get_backend("cpu")` returns the NumPy backend; GPU backends register here as they are added and are
imported lazily so that the core runs where only NumPy is installed.
"""

from __future__ import annotations

from typing import Any, Callable

from zinc.backends.base import BaseOps, Ops, QTensor, RopeParams, WeightUse, check_capabilities
from zinc.errors import BackendUnavailableError

__all__ = ["BaseOps", "Ops", "QTensor", "RopeParams", "WeightUse", "check_capabilities",
           "get_backend", "register_backend", "backend_names"]


def _cpu(**options: Any) -> Ops:
    from zinc.backends.cpu import CpuOps

    return CpuOps(**options)


def _cuda(**options: Any) -> Ops:
    from zinc.backends.cuda import make_cuda_ops

    return make_cuda_ops(**options)


def _vulkan(**options: Any) -> Ops:
    from zinc.backends.vulkan import VulkanOps

    return VulkanOps(**options)


_FACTORIES: dict[str, Callable[..., Ops]] = {"cpu": _cpu, "cuda": _cuda, "vulkan": _vulkan}


def register_backend(name: str, factory: Callable[..., Ops]) -> None:
    """Make `get_backend(name, **options)` call `factory(**options)`."""
    _FACTORIES[name] = factory


def backend_names() -> list[str]:
    return sorted(_FACTORIES)


def get_backend(name: str | Ops = "cpu", **options: Any) -> Ops:
    """An `Ops` instance for a backend name (an `Ops` instance is returned as is)."""
    if not isinstance(name, str):
        return name
    try:
        factory = _FACTORIES[name]
    except KeyError:
        raise BackendUnavailableError(
            f"unknown backend {name!r}; available: {', '.join(backend_names())}") from None
    return factory(**options)

