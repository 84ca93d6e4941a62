"""Managed models: the catalog (`data`), the local store with the active model (`store`) and
resumable, verified downloads (`pull`). Used by `zinc model list|pull|use|active|rm`."""

from zinc.catalog.data import (
    CATALOG, EMBEDDED_ID, EMBEDDED_PACKAGE, CatalogEntry, CatalogError, entries, get_entry, validate_id,
)
from zinc.catalog.pull import ChecksumError, DiskFullError, DownloadError, ProgressBar, PullResult
from zinc.catalog.pull import pull as pull_model  # the submodule keeps the name `pull`
from zinc.catalog.store import ModelStore, embedded_available, embedded_path

__all__ = [
    "CATALOG", "EMBEDDED_ID", "EMBEDDED_PACKAGE", "CatalogEntry", "CatalogError", "ChecksumError",
    "DiskFullError", "DownloadError", "ModelStore", "ProgressBar", "PullResult", "embedded_available",
    "embedded_path", "entries", "get_entry", "pull_model", "validate_id",
]
