"""Fixtures: a tiny synthetic Qwen3 model (ChatML template) served by uvicorn on a free loopback port."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("starlette")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Served:
    url: str
    host: Any  # zinc.server.service.ModelHost
    app: Any
    server: Any
    thread: threading.Thread

    @property
    def v1(self) -> str:
        return self.url + "/v1"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.host.shutdown()


def start_server(model: Any, model_id: str = "qwen3-tiny", **kw: Any) -> Served:
    import uvicorn

    from zinc.server import build

    app, host = build(model, model_id, **kw)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    t = threading.Thread(target=server.run, daemon=True)
    t.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        assert t.is_alive(), "the server thread died"
        time.sleep(0.02)
    return Served(f"http://127.0.0.1:{port}", host, app, server, t)


@pytest.fixture(scope="session")
def tiny_path(tmp_path_factory):
    from zinc.synth import write_model

    path = tmp_path_factory.mktemp("server-model") / "qwen3-tiny.gguf"
    write_model(path, "qwen3-tiny", ftype="Q4_K_M")
    return path


@pytest.fixture(scope="session")
def tiny_model(tiny_path):
    import zinc

    return zinc.load(tiny_path, n_ctx=1024)


@pytest.fixture(scope="session")
def server_factory():
    return start_server


@pytest.fixture(scope="session")
def served(tiny_model):
    s = start_server(tiny_model)
    yield s
    s.stop()


@pytest.fixture(scope="session")
def client(served):
    openai = pytest.importorskip("openai")
    return openai.OpenAI(base_url=served.v1, api_key="unused", max_retries=0, timeout=60)


@pytest.fixture(scope="session")
def no_eos(tiny_model):
    """logit_bias banning every end-of-generation token (so generation runs to max_tokens)."""
    return {str(t): -100 for t in tiny_model.tokenizer.eog_ids}
