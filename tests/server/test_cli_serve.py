"""`zinc serve` and `zinc chat` as subprocesses: load a model file, bind loopback, answer the API
(with ZINC_API_KEY), serve the UI, print the URL, stop cleanly on SIGINT."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

httpx = pytest.importorskip("httpx")


def _spawn(args, env_extra=None, home=None):
    env = dict(os.environ, ZINC_HOME=str(home), **(env_extra or {}))
    if "ZINC_API_KEY" not in (env_extra or {}):
        env.pop("ZINC_API_KEY", None)
    return subprocess.Popen([sys.executable, "-m", "zinc.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def _wait_up(proc, url, timeout=60.0):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        assert proc.poll() is None, proc.stderr.read()
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError("the server did not come up")


def _stop(proc):
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)
        raise AssertionError("zinc serve did not stop on SIGINT")


def test_zinc_serve_and_chat(tiny_path, tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    proc = _spawn(["serve", "-m", str(tiny_path), "--port", str(port), "-c", "512"],
                  {"ZINC_API_KEY": "k1"}, tmp_path)
    try:
        _wait_up(proc, url)
        h = httpx.get(url + "/health").json()
        assert h["model"] == "qwen3-tiny" and h["n_ctx"] == 512
        assert httpx.get(url + "/v1/models").status_code == 401
        r = httpx.post(url + "/v1/chat/completions", headers={"Authorization": "Bearer k1"},
                       json={"messages": [{"role": "user", "content": "hi"}], "max_tokens": 3})
        assert r.status_code == 200 and r.json()["usage"]["completion_tokens"] <= 3
        assert "<html" in httpx.get(url + "/").text.lower()
    finally:
        _stop(proc)
    assert url in proc.stdout.read()
    # zinc chat: the port is taken by nothing now; with no browser it prints the URL
    proc = _spawn(["chat", "-m", str(tiny_path), "--port", str(port), "--no-browser", "-c", "256"], home=tmp_path)
    try:
        _wait_up(proc, url)
    finally:
        _stop(proc)
    assert proc.returncode in (0, 130) and url in proc.stdout.read()  # 130: interrupted, as Ctrl-C
