"""The architecture registry: `general.architecture` string → the module that implements it.

An architecture module exports `config(gguf) -> Config`, `tensors(cfg) -> list[TensorSpec]`,
`cache_layout(cfg) -> list[LayerCacheSpec]` and `forward(ops, cfg, weights, batch, cache) -> logits`.
Modules are imported on first use.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from zinc.errors import UnsupportedModelError

ARCHITECTURES: dict[str, str] = {
    "llama": "zinc.models.llama",
    "qwen3": "zinc.models.qwen3",
    "qwen3moe": "zinc.models.qwen3",
    "gemma3": "zinc.models.gemma3",
    "qwen35": "zinc.models.qwen35",
    "qwen35moe": "zinc.models.qwen35",
    "gemma4": "zinc.models.gemma4",
    "gpt-oss": "zinc.models.gpt_oss",
}


def register(arch: str, module: str) -> None:
    """Map a `general.architecture` value to an importable module path."""
    ARCHITECTURES[arch] = module


def supported_architectures() -> list[str]:
    return sorted(ARCHITECTURES)


def get_architecture(arch: str | None, path: object = None) -> ModuleType:
    """The module for `arch`; UnsupportedModelError naming it (and the file) when there is none."""
    if arch is None:
        where = f"{path}: " if path else ""
        raise UnsupportedModelError(f"{where}the file has no general.architecture key")
    mod = ARCHITECTURES.get(arch)
    if mod is None:
        where = f"{path}: " if path else ""
        raise UnsupportedModelError(f"{where}architecture {arch!r} is not supported "
                                    f"(supported: {', '.join(supported_architectures())})")
    return importlib.import_module(mod)
