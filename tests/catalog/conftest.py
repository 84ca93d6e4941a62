"""A local HTTP file server on 127.0.0.1 for download tests: honours Range, can drop a connection
mid-way, answer with an error status, ignore Range, redirect with a published hash header."""

from __future__ import annotations

import hashlib
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:  # noqa: N802
        srv = self.server
        srv.requests.append((self.path, self.headers.get("Range")))
        if self.path in srv.status:
            self.send_error(srv.status[self.path])
            return
        if self.path in srv.redirects:
            target, sha = srv.redirects[self.path]
            self.send_response(302)
            self.send_header("Location", target)
            if sha:
                self.send_header("X-Linked-Etag", f'"{sha}"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        data = srv.files.get(self.path)
        if data is None:
            self.send_error(404)
            return
        self._send(srv, data)

    def _send(self, srv, data: bytes) -> None:
        start, rng = 0, self.headers.get("Range")
        m = re.match(r"^bytes=(\d+)-$", rng or "")
        if m and not srv.ignore_range:
            start = int(m.group(1))
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        body = data[start:]
        self.send_header("Content-Length", str(len(body)))
        if srv.etag:
            self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
        self.end_headers()
        if srv.drops.get(self.path, 0) > 0:  # send half, then hang up
            srv.drops[self.path] -= 1
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)


class FileServer:
    """The running server and its knobs; `url` is the endpoint (http://127.0.0.1:PORT)."""

    def __init__(self) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.files, self.httpd.status, self.httpd.redirects = {}, {}, {}
        self.httpd.drops, self.httpd.requests = {}, []
        self.httpd.ignore_range, self.httpd.etag = False, False
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __getattr__(self, name):
        return getattr(self.httpd, name)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def server():
    s = FileServer()
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def payload() -> bytes:
    return np.random.default_rng(1234).integers(0, 256, size=300_000, dtype=np.uint8).tobytes()
