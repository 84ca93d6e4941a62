"""Downloading catalog models: resumable, verified, atomic. Standard library only (urllib).

`pull(entry, store, endpoint)` downloads ``entry`` into ``store``:

* the bytes go to ``<file>.partial``; an interrupted download continues where it stopped (HTTP
  ``Range: bytes=N-``; a server that ignores the range restarts it from zero), and dropped
  connections are retried ``retries`` times within one call;
* the file is checked against the catalog's sha256, else the sha256 the server publishes
  (Hugging Face's ``X-Linked-Etag``, also seen on redirects), and against the announced size;
* only a verified file is renamed (atomically) to its final name: a failed or mismatched download
  never replaces a good file; a corrupt one is deleted, an incomplete one kept for resuming;
* errors are `DownloadError`s that say what happened: HTTP status, unreachable server, connection
  lost, disk full (``ENOSPC``, also checked up front against the announced size), hash mismatch.
"""

from __future__ import annotations

import errno
import hashlib
import http.client
import os
import re
import shutil
import socket
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TextIO

from zinc import __version__
from zinc.catalog.data import CatalogEntry, CatalogError
from zinc.catalog.store import ModelStore, embedded_path

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; concurrent pulls of one model are on the user
    fcntl = None  # type: ignore[assignment]

ProgressFn = Callable[[int, "int | None"], None]
_SHA_RE = re.compile(r'^(?:W/)?"?([0-9a-f]{64})"?$')
_RANGE_RE = re.compile(r"^bytes (\d+)-(\d+)/(\d+|\*)$")


class DownloadError(CatalogError):
    """A download failed (network, HTTP status, disk); the message says whether it can resume."""


class ChecksumError(DownloadError):
    """The downloaded bytes do not have the expected sha256 (or size); nothing was installed."""


class DiskFullError(DownloadError):
    """The disk filled up (ENOSPC) or has too little room for the announced size."""


class _Retry(Exception):
    """A transient failure: the connection dropped; resuming may help."""


@dataclass
class PullResult:
    """What `pull` did."""

    path: Path
    sha256: str | None
    verified_by: str  # "catalog", "server", "size" or "installed" (already there) / "package"
    downloaded: int = 0  # bytes transferred by this call
    resumed_from: int = 0  # bytes that were already in the .partial file


class _Hops(urllib.request.HTTPRedirectHandler):
    """Follows redirects and remembers every hop's headers (the hash sits on the first one)."""

    def __init__(self) -> None:
        self.headers: list = []

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D102
        self.headers.append(headers)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _published_sha(all_headers: list) -> str | None:
    for headers in all_headers:
        for key in ("X-Linked-Etag", "ETag"):
            m = _SHA_RE.match((headers.get(key) or "").strip().lower())
            if m:
                return m.group(1)
    return None


class _State:
    """The .partial file and a running sha256 of its bytes, kept across attempts."""

    def __init__(self, partial: Path) -> None:
        self.partial = partial
        self.hasher = hashlib.sha256()
        self.hashed = 0

    def size(self) -> int:
        return self.partial.stat().st_size if self.partial.is_file() else 0

    def sync(self) -> int:
        """Make the hasher cover exactly the bytes on disk; returns that size."""
        size = self.size()
        if size != self.hashed:
            self.hasher, self.hashed = hashlib.sha256(), 0
            with open(self.partial, "rb") as f:
                while block := f.read(1 << 20):
                    self.hasher.update(block)
                    self.hashed += len(block)
        return size

    def reset(self) -> None:
        self.partial.unlink(missing_ok=True)
        self.hasher, self.hashed = hashlib.sha256(), 0


def _open(url: str, offset: int, timeout: float):
    hops = _Hops()
    opener = urllib.request.build_opener(hops)
    headers = {"User-Agent": f"zinc/{__version__}", "Accept-Encoding": "identity"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    req = urllib.request.Request(url, headers=headers)
    try:
        resp = opener.open(req, timeout=timeout)
    except urllib.error.HTTPError as e:
        if e.code == 416 and offset:
            m = re.match(r"^bytes \*/(\d+)$", (e.headers.get("Content-Range") or "").strip())
            e.close()
            return None, (int(m.group(1)) if m else None), hops.headers + [e.headers]
        e.close()
        hint = (" (the model file is not at that address: check the endpoint)" if e.code == 404 else
                " (the server failed: try again later; a partial download is kept)" if e.code >= 500 else "")
        raise DownloadError(f"{url}: HTTP {e.code} {e.reason}{hint}") from None
    except urllib.error.URLError as e:
        if isinstance(e.reason, (socket.timeout, TimeoutError, ConnectionResetError)):
            raise _Retry(f"{url}: {e.reason}") from None
        raise DownloadError(f"cannot reach {url}: {e.reason}") from None
    except (socket.timeout, TimeoutError, ConnectionError, http.client.HTTPException) as e:
        raise _Retry(f"{url}: {e}") from None
    return resp, None, hops.headers + [resp.headers]


def _total_of(resp, offset: int) -> tuple[int, int | None]:
    """(start, total) of a response: 206 must start at offset; 200 starts at 0."""
    if resp.status == 206:
        m = _RANGE_RE.match((resp.headers.get("Content-Range") or "").strip())
        if not m or int(m.group(1)) != offset:
            raise DownloadError(f"{resp.url}: the server answered the resume request with an unexpected "
                                f"range {resp.headers.get('Content-Range')!r}")
        return offset, (int(m.group(3)) if m.group(3) != "*" else None)
    length = resp.headers.get("Content-Length")
    return 0, (int(length) if length and length.isdigit() else None)


def _write_body(resp, st: _State, start: int, total: int | None, progress: ProgressFn | None,
                chunk: int) -> int:
    """Stream the body to the .partial file; returns the bytes written. Raises _Retry on a drop."""
    done = start
    try:
        with open(st.partial, "r+b" if st.partial.exists() else "wb") as f:
            f.seek(start)
            f.truncate()
            while True:
                try:
                    block = resp.read(chunk)
                except (http.client.IncompleteRead, ConnectionError, socket.timeout, TimeoutError) as e:
                    raise _Retry(f"connection lost after {done} bytes ({e.__class__.__name__})") from None
                if not block:
                    break
                f.write(block)
                st.hasher.update(block)
                done += len(block)
                st.hashed = done
                if progress:
                    progress(done, total)
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        st.hashed = -1  # what reached the disk is unknown: rehash before trusting it
        if e.errno == errno.ENOSPC:
            raise DiskFullError(f"disk full while writing {st.partial} ({done} bytes so far); free some "
                                "space and run the same command again to resume") from None
        raise DownloadError(f"cannot write {st.partial}: {e}") from None
    if total is not None and done < total:
        raise _Retry(f"connection closed after {done} of {total} bytes")
    return done - start


def _check_room(folder: Path, need: int) -> None:
    free = shutil.disk_usage(folder).free
    if need > free:
        raise DiskFullError(f"not enough disk space in {folder}: the download needs {need / 2**30:.2f} GiB "
                            f"more, {free / 2**30:.2f} GiB are free")


def _attempt(url: str, entry: CatalogEntry, st: _State, progress: ProgressFn | None, timeout: float,
             chunk: int) -> tuple[int, int | None, str | None]:
    """One HTTP request: resume or start the download. Returns (bytes written, total, published sha)."""
    offset = st.sync()
    resp, done_total, hops = _open(url, offset, timeout)
    published = _published_sha(hops)
    if entry.sha256 and published and published != entry.sha256:
        if resp is not None:
            resp.close()
        raise ChecksumError(f"{url}: the server publishes sha256 {published} but the catalog expects "
                            f"{entry.sha256} for {entry.id!r}: the upstream file has changed; nothing "
                            "was installed")
    if resp is None:  # 416: the .partial already holds the whole file (or more)
        if done_total != offset:
            st.reset()
            raise _Retry(f"the server refused to resume at byte {offset}; starting over")
        return 0, done_total, published
    with resp:
        start, total = _total_of(resp, offset)
        if start == 0 and offset:
            st.hasher, st.hashed = hashlib.sha256(), 0  # the server ignored Range: start over
        if total is not None:
            _check_room(st.partial.parent, total - start)
        written = _write_body(resp, st, start, total, progress, chunk)
    return written, (total if total is not None else start + written), published


def _verify(entry: CatalogEntry, st: _State, total: int | None, published: str | None) -> tuple[str, str]:
    size = st.size()
    st.sync()
    digest = st.hasher.hexdigest()
    expected, source = (entry.sha256, "catalog") if entry.sha256 else (published, "server")
    problem = None
    if total is not None and size != total:
        problem = f"size {size} bytes, the server announced {total}"
    elif entry.size_exact and size != entry.size:
        problem = f"size {size} bytes, the catalog says {entry.size}"
    elif expected and digest != expected:
        problem = f"sha256 {digest}, expected {expected} ({source})"
    if problem:
        st.reset()
        raise ChecksumError(f"download of {entry.id!r} is corrupt: {problem}; it was deleted and nothing "
                            "was installed (run the same command to download it again)")
    return digest, (source if expected else "size")


def _lock(path: Path):
    f = open(path, "a")
    if fcntl is not None:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            raise DownloadError(f"another `zinc model pull` is downloading into {path.parent}") from None
    return f


def pull(entry: CatalogEntry, store: ModelStore, endpoint: str, *, progress: ProgressFn | None = None,
         log: Callable[[str], None] | None = None, retries: int = 3, timeout: float = 30.0,
         chunk_size: int = 1 << 20, force: bool = False, backoff: float = 1.0) -> PullResult:
    """Download `entry` into `store` (see the module docstring); returns where it is."""
    if entry.embedded:
        return PullResult(path=embedded_path(), sha256=entry.sha256, verified_by="package")
    dest = store.path_for(entry)
    if dest.is_file() and not force:
        return PullResult(path=dest, sha256=None, verified_by="installed")
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise DownloadError(f"cannot create {dest.parent}: {e}") from None
    st = _State(store.partial_path(entry))
    url = entry.url(endpoint)
    lock = _lock(dest.with_name(f".{dest.name}.lock"))
    try:
        resumed = st.size()
        if resumed and log:
            log(f"resuming {entry.id} at {resumed / 2**20:.1f} MiB")
        written, attempt = 0, 0
        while True:
            try:
                n, total, published = _attempt(url, entry, st, progress, timeout, chunk_size)
                written += n
                break
            except _Retry as e:
                attempt += 1
                if attempt > retries:
                    raise DownloadError(f"{e}; the partial download ({st.size()} bytes) is kept: run the "
                                        "same command again to resume") from None
                if log:
                    log(f"{e}; retrying ({attempt}/{retries})")
                time.sleep(backoff * attempt)
        digest, how = _verify(entry, st, total, published)
        os.replace(st.partial, dest)
        _fsync_dir(dest.parent)
    finally:
        lock.close()
        dest.with_name(f".{dest.name}.lock").unlink(missing_ok=True)
    return PullResult(path=dest, sha256=digest, verified_by=how, downloaded=written, resumed_from=resumed)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class ProgressBar:
    """A one-line progress bar on a stream (stderr): percent, bytes, speed and time left."""

    def __init__(self, label: str, stream: TextIO | None = None, interval: float = 0.2) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.t0 = time.monotonic()
        self.first: int | None = None
        self.last = 0.0
        self.shown = False

    def __call__(self, done: int, total: int | None) -> None:
        now = time.monotonic()
        if self.first is None:
            self.first, self.t0 = done, now
        final = total is not None and done >= total
        if not final and now - self.last < (self.interval if self.tty else 10.0):
            return
        self.last = now
        rate = (done - self.first) / max(now - self.t0, 1e-6)
        gib = f"{done / 2**30:.2f}"
        if total:
            eta = (total - done) / rate if rate > 0 else 0
            text = (f"{self.label} {100 * done / total:5.1f}% {gib}/{total / 2**30:.2f} GiB "
                    f"{rate / 2**20:6.1f} MiB/s ETA {int(eta) // 60}:{int(eta) % 60:02d}")
        else:
            text = f"{self.label} {gib} GiB {rate / 2**20:6.1f} MiB/s"
        self.stream.write(("\r" + text + " " * 4) if self.tty else text + "\n")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown and self.tty:
            self.stream.write("\n")
            self.stream.flush()
