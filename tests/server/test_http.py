"""Raw HTTP against a live loopback server: error bodies, size and token limits, API key, CORS,
disconnecting clients cancel their generation, SSE framing, tokenize/detokenize, health, metrics and
the model routes (ids validated, no path traversal)."""

from __future__ import annotations

import json
import time

import pytest

httpx = pytest.importorskip("httpx")

MSG = [{"role": "user", "content": "hi"}]


def _wait_idle(host, timeout: float = 10.0) -> float:
    t0 = time.monotonic()
    while host.engine.n_running or host.engine.n_waiting:
        assert time.monotonic() - t0 < timeout, "the engine still runs the abandoned request"
        time.sleep(0.02)
    return time.monotonic() - t0


def test_error_bodies(served):
    r = httpx.post(served.v1 + "/chat/completions", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["type"] == "invalid_request_error"
    r = httpx.post(served.v1 + "/chat/completions", json={"messages": MSG, "temperature": [1]})
    err = r.json()["error"]
    assert r.status_code == 400 and err["param"] == "temperature" and "number" in err["message"]
    r = httpx.post(served.v1 + "/completions", json={"prompt": ["a", "b"]})
    assert r.status_code == 400
    r = httpx.post(served.v1 + "/chat/completions", json={"messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "http://x"}}]}]})
    assert r.status_code == 400 and r.json()["error"]["code"] == "unsupported_content"
    r = httpx.get(served.v1 + "/chat/completions")
    assert r.status_code == 405


def test_request_size_limit(served):
    big = {"messages": [{"role": "user", "content": "x" * (5 * 2**20)}]}
    r = httpx.post(served.v1 + "/chat/completions", json=big, timeout=30)
    assert r.status_code == 413 and r.json()["error"]["code"] == "request_too_large"


def test_context_overflow(served):
    r = httpx.post(served.v1 + "/completions", json={"prompt": "hello " * 3000, "max_tokens": 1}, timeout=30)
    assert r.status_code == 400 and r.json()["error"]["code"] == "context_length_exceeded"


def test_sse_framing(served, no_eos):
    body = {"messages": MSG, "stream": True, "max_tokens": 4, "logit_bias": no_eos}
    with httpx.stream("POST", served.v1 + "/chat/completions", json=body) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        raw = r.read().decode()
    events = [e for e in raw.split("\n\n") if e]
    assert all(e.startswith("data: ") for e in events) and events[-1] == "data: [DONE]"
    objs = [json.loads(e[6:]) for e in events[:-1]]
    assert all(o["object"] == "chat.completion.chunk" for o in objs)
    assert objs[-1]["choices"][0]["finish_reason"] == "length"


@pytest.fixture
def jobs(served, monkeypatch):
    """The engine jobs the server submits during a test."""
    seen = []
    submit = served.host.submit

    def spy(*a, **kw):
        job = submit(*a, **kw)
        seen.append(job)
        return job
    monkeypatch.setattr(served.host, "submit", spy)
    return seen


def _cancelled(jobs, timeout: float = 5.0) -> None:
    t0 = time.monotonic()
    assert jobs
    for job in jobs:
        while not job.handle.done:
            assert time.monotonic() - t0 < timeout, "the abandoned request still runs"
            time.sleep(0.01)
        r = job.handle._result
        assert r.finish_reason == "cancelled" and r.usage.completion_tokens < 900


def test_stream_disconnect_cancels(served, no_eos, jobs):
    body = {"messages": MSG, "stream": True, "max_tokens": 900, "logit_bias": no_eos, "n": 2}
    with httpx.stream("POST", served.v1 + "/chat/completions", json=body) as r:
        assert next(r.iter_lines()).startswith("data: ")
    _cancelled(jobs)
    _wait_idle(served.host)


def test_nonstream_disconnect_cancels(served, no_eos, jobs):
    body = {"messages": MSG, "max_tokens": 900, "logit_bias": no_eos}
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(served.v1 + "/chat/completions", json=body, timeout=httpx.Timeout(5, read=0.2))
    _cancelled(jobs)
    _wait_idle(served.host)


def test_tokenize_detokenize(served):
    r = httpx.post(served.url + "/tokenize", json={"content": "Hello world"})
    ids = r.json()["tokens"]
    assert ids and all(isinstance(i, int) for i in ids)
    r = httpx.post(served.url + "/detokenize", json={"tokens": ids})
    assert r.json()["content"] == "Hello world"
    r = httpx.post(served.url + "/tokenize", json={"content": "Hi", "with_pieces": True})
    assert "piece" in r.json()["tokens"][0]
    assert httpx.post(served.url + "/detokenize", json={"tokens": [10**9]}).status_code == 400


def test_health_and_metrics(served, client):
    for _ in range(2):  # the second from the first's cache
        client.chat.completions.create(model="m", messages=MSG, max_tokens=2)
    h = httpx.get(served.url + "/health").json()
    assert h["status"] == "ok" and h["model"] == "qwen3-tiny" and h["backend"] == "cpu"
    assert {"running", "queued"} <= set(h["requests"]) and h["uptime_s"] >= 0 and "memory" in h
    m = httpx.get(served.url + "/metrics").text
    assert 'zinc_requests_total{endpoint="/v1/chat/completions",status="200"}' in m
    for name in ("zinc_time_to_first_token_seconds_bucket", "zinc_decode_tokens_per_second_count",
                 "zinc_requests_queued", "zinc_generated_tokens_total"):
        assert name in m
    cached = [line for line in m.splitlines() if line.startswith("zinc_prompt_tokens_cached_total ")]
    assert len(cached) == 1 and int(cached[0].split()[1]) > 0


def test_models_routes(served):
    data = httpx.get(served.v1 + "/models").json()["data"]
    assert data[0]["id"] == "qwen3-tiny" and data[0]["active"]
    assert any(d.get("embedded") for d in data) and all("installed" in d and "fits" in d for d in data)
    for bad in ("../../etc/passwd", "/abs", "no-such-model", ""):
        for route in ("activate", "pull", "remove"):
            r = httpx.post(served.v1 + f"/models/{route}", json={"model": bad})
            assert r.status_code in (400, 404), (bad, route, r.text)
            assert "error" in r.json()
    r = httpx.post(served.v1 + "/models/activate", json={"model": 3})
    assert r.status_code == 400


def test_ui_served(served):
    r = httpx.get(served.url + "/")
    assert r.status_code == 200 and "<html" in r.text.lower()
    for name in ("app.js", "style.css"):
        assert httpx.get(served.url + f"/static/{name}").status_code == 200
    assert httpx.get(served.url + "/static/../app.py").status_code == 404


def test_api_key_cors_and_limits(tiny_path, server_factory):
    import zinc
    from zinc.server.app import ServerConfig
    from zinc.server.openai import Limits

    cfg = ServerConfig(api_key="s3cret", cors_origins=("http://app.example",), limits=Limits(max_tokens=16))
    s = server_factory(zinc.load(tiny_path, n_ctx=256), config=cfg)
    try:
        r = httpx.post(s.v1 + "/chat/completions", json={"messages": MSG, "max_tokens": 2})
        assert r.status_code == 401 and r.json()["error"]["type"] == "authentication_error"
        bad = {"Authorization": "Bearer nope"}
        assert httpx.get(s.v1 + "/models", headers=bad).status_code == 401
        assert httpx.get(s.url + "/metrics").status_code == 401
        ok = {"Authorization": "Bearer s3cret"}
        r = httpx.post(s.v1 + "/chat/completions", json={"messages": MSG, "max_tokens": 2}, headers=ok)
        assert r.status_code == 200
        r = httpx.post(s.v1 + "/chat/completions", json={"messages": MSG, "max_tokens": 17}, headers=ok)
        assert r.status_code == 400 and "16" in r.json()["error"]["message"]
        assert httpx.get(s.url + "/health").status_code == 200 and httpx.get(s.url + "/").status_code == 200
        pre = httpx.options(s.v1 + "/chat/completions", headers={
            "Origin": "http://app.example", "Access-Control-Request-Method": "POST"})
        assert pre.headers.get("access-control-allow-origin") == "http://app.example"
        evil = httpx.options(s.v1 + "/chat/completions", headers={
            "Origin": "http://evil.example", "Access-Control-Request-Method": "POST"})
        assert evil.headers.get("access-control-allow-origin") is None
    finally:
        s.stop()


def test_no_cors_by_default(served):
    r = httpx.get(served.v1 + "/models", headers={"Origin": "http://evil.example"})
    assert "access-control-allow-origin" not in r.headers
