"""RuntimeOptions: the settings passed down explicitly from the CLI (or a caller) to the library.

Nothing below the CLI reads environment variables; `zinc.cli` maps ``ZINC_HOME`` /
``ZINC_ENDPOINT`` and its flags onto this dataclass.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

BACKENDS = ("auto", "cpu", "cuda", "vulkan")
DEFAULT_ENDPOINT = "https://huggingface.co"
DEFAULT_N_CTX = 4096
KV_TYPES = ("f32", "f16", "q8_0")  # KV cache cell types (a backend stores those of its `kv_types`)
KV_BYTES = {"f32": 4.0, "f16": 2.0, "q8_0": 34 / 32}  # bytes a K or V value by cell type (q8_0: 32 int8 + f16)


def default_home() -> Path:
    """``~/.cache/zinc``: where managed models and the active-model choice live."""
    return Path.home() / ".cache" / "zinc"


@dataclass(frozen=True)
class RuntimeOptions:
    """Where models live, where they are downloaded from, which backend and context to use."""

    home: Path = field(default_factory=default_home)
    endpoint: str = DEFAULT_ENDPOINT
    backend: str = "auto"
    n_ctx: int | None = None  # None: DEFAULT_N_CTX, capped at the model's trained context
    kv_type: str | None = None  # KV cache cells: "f32", "f16" or "q8_0"; None: the backend's default

    def __post_init__(self) -> None:
        home = Path(os.fspath(self.home)).expanduser()
        if not str(home).strip():
            raise ValueError("RuntimeOptions.home must be a directory path, got an empty string")
        object.__setattr__(self, "home", home)
        if not isinstance(self.endpoint, str) or not self.endpoint.startswith(("http://", "https://")):
            raise ValueError(f"RuntimeOptions.endpoint must be an http:// or https:// URL, got {self.endpoint!r}")
        object.__setattr__(self, "endpoint", self.endpoint.rstrip("/"))
        if self.backend not in BACKENDS:
            raise ValueError(f"RuntimeOptions.backend must be one of {', '.join(BACKENDS)}, got {self.backend!r}")
        if self.n_ctx is not None and (isinstance(self.n_ctx, bool) or not isinstance(self.n_ctx, int)
                                       or self.n_ctx < 1):
            raise ValueError(f"RuntimeOptions.n_ctx must be a positive integer, got {self.n_ctx!r}")
        if self.kv_type is not None and self.kv_type not in KV_TYPES:
            raise ValueError(f"RuntimeOptions.kv_type must be one of {', '.join(KV_TYPES)}, got {self.kv_type!r}")

    @property
    def models_dir(self) -> Path:
        return self.home / "models"

    def context_for(self, trained: int | None) -> int:
        """The context length to use for a model trained for `trained` tokens (0/None: unknown)."""
        if self.n_ctx is not None:
            return self.n_ctx
        return min(DEFAULT_N_CTX, trained) if trained else DEFAULT_N_CTX

    def with_(self, **changes: object) -> "RuntimeOptions":
        return replace(self, **changes)  # type: ignore[arg-type]
