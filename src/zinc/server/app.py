"""The ASGI app: OpenAI-compatible routes, model management, health, metrics and the chat UI.

    app = create_app(host, ServerConfig(api_key="sk-..."))   # host: service.ModelHost
    uvicorn.run(app, host="127.0.0.1", port=8080)

Routes: POST /v1/chat/completions, /v1/completions (SSE when ``stream``), GET /v1/models, POST
/v1/models/activate|pull|remove, GET /health, GET /metrics, POST /tokenize, /detokenize, and the UI
at / (static files from zinc/server/static). Safe defaults: with an API key every /v1, /tokenize,
/detokenize and /metrics route needs ``Authorization: Bearer KEY``; bodies over `max_body_bytes`
are refused (413); CORS is off unless origins are given. The `model` field of a generation request
is ignored: the loaded model answers (switch with /v1/models/activate).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from zinc.server import generation
from zinc.server.metrics import Metrics
from zinc.server.openai import APIError, Limits, parse_chat, parse_completion

STATIC = Path(__file__).parent / "static"
OPEN_PATHS = ("/", "/health")


@dataclass(frozen=True)
class ServerConfig:
    api_key: str | None = None
    cors_origins: tuple[str, ...] = ()
    max_body_bytes: int = 4 * 2**20
    limits: Limits = field(default_factory=Limits)
    endpoint: str = "https://huggingface.co"
    backend: str = "cpu"
    device: str = "cpu"


def _error(e: APIError) -> JSONResponse:
    return JSONResponse(e.body(), status_code=e.status)


async def read_json(request: Request, limit: int) -> Any:
    """The request body as JSON; APIError 413 when larger than `limit`, 400 when not JSON."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise APIError(f"request body too large (limit {limit} bytes)", status=413, code="request_too_large")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise APIError(f"request body too large (limit {limit} bytes)", status=413, code="request_too_large")
        chunks.append(chunk)
    try:
        return json.loads(b"".join(chunks) or b"null")
    except (ValueError, UnicodeDecodeError) as e:
        raise APIError(f"the request body is not valid JSON: {e}") from None


class ZincAPI:
    """The route handlers, sharing the model host, the config and the metrics."""

    def __init__(self, host: Any, config: ServerConfig) -> None:
        self.host, self.config, self.metrics = host, config, Metrics()
        self.started = time.time()

    def _auth(self, request: Request) -> None:
        key = self.config.api_key
        if not key or request.url.path in OPEN_PATHS:
            return
        got = request.headers.get("authorization", "")
        if not (got.startswith("Bearer ") and hmac.compare_digest(got[7:].strip().encode(), key.encode())):
            raise APIError("invalid or missing API key (Authorization: Bearer KEY)", status=401,
                           type_="authentication_error", code="invalid_api_key")

    async def _generate(self, request: Request, kind: str) -> Response:
        endpoint = request.url.path
        try:
            self._auth(request)
            body = await read_json(request, self.config.max_body_bytes)
            req = (parse_chat if kind == "chat" else parse_completion)(body, self.config.limits)
            choices, prompt_text = generation.start(self.host, req)
        except APIError as e:
            self.metrics.request(endpoint, e.status)
            return _error(e)
        name = self.host.model_id
        if req.stream:
            self.metrics.request(endpoint, 200)
            return StreamingResponse(self._sse(generation.stream(self.host, req, choices, name, prompt_text),
                                               choices), media_type="text/event-stream",
                                     headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        try:
            result = await self._unless_disconnected(
                request, generation.complete(self.host, req, choices, name, prompt_text))
        except APIError as e:
            self.metrics.request(endpoint, e.status)
            return _error(e)
        finally:
            for c in choices:
                c.job.cancel()
        self._observe(choices)
        if result is None:  # the client left; nobody reads this
            self.metrics.request(endpoint, 499)
            return Response(status_code=499)
        self.metrics.request(endpoint, 200)
        return JSONResponse(result)

    async def _unless_disconnected(self, request: Request, coro: Any) -> Any:
        """Await `coro`, or cancel it and return None when the client disconnects first."""
        work = asyncio.ensure_future(coro)

        async def watch() -> None:
            while True:
                msg = await request.receive()
                if msg["type"] == "http.disconnect":
                    return

        watcher = asyncio.ensure_future(watch())
        try:
            done, _ = await asyncio.wait({work, watcher}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            watcher.cancel()
        if work in done:
            return work.result()
        work.cancel()
        return None

    async def _sse(self, chunks: AsyncIterator[dict], choices: list) -> AsyncIterator[bytes]:
        try:
            async for chunk in chunks:
                yield f"data: {json.dumps(chunk, separators=(',', ':'))}\n\n".encode()
        except APIError as e:
            yield f"data: {json.dumps(e.body())}\n\n".encode()
        finally:
            for c in choices:
                c.job.cancel()
            self._observe(choices)
        yield b"data: [DONE]\n\n"

    def _observe(self, choices: list) -> None:
        for st in generation.stats_of(choices):
            self.metrics.generation(st)

    async def chat(self, request: Request) -> Response:
        return await self._generate(request, "chat")

    async def completions(self, request: Request) -> Response:
        return await self._generate(request, "completion")

    # -- utilities ---------------------------------------------------------------------------------
    async def _json_route(self, request: Request, fn: Any) -> Response:
        try:
            self._auth(request)
            body = await read_json(request, self.config.max_body_bytes) if request.method == "POST" else None
            out = await fn(body)
            self.metrics.request(request.url.path, 200)
            return out if isinstance(out, Response) else JSONResponse(out)
        except APIError as e:
            self.metrics.request(request.url.path, e.status)
            return _error(e)

    async def tokenize(self, request: Request) -> Response:
        async def fn(body: Any) -> dict:
            if not isinstance(body, dict) or not isinstance(body.get("content"), str):
                raise APIError("'content' must be a string", param="content")
            add = body.get("add_special", False)
            parse = body.get("parse_special", True)
            if not isinstance(add, bool) or not isinstance(parse, bool):
                raise APIError("'add_special' and 'parse_special' must be booleans")
            ids = self.host.model.tokenize(body["content"], add_special=add, parse_special=parse)
            out: dict[str, Any] = {"tokens": ids}
            if body.get("with_pieces") is True:
                tok = self.host.model.tokenizer
                out["tokens"] = [{"id": i, "piece": tok.token_to_piece(i, special=True).decode("utf-8", "replace")}
                                 for i in ids]
            return out
        return await self._json_route(request, fn)

    async def detokenize(self, request: Request) -> Response:
        async def fn(body: Any) -> dict:
            toks = body.get("tokens") if isinstance(body, dict) else None
            n = self.host.model.n_vocab
            if not isinstance(toks, list) or not all(isinstance(t, int) and not isinstance(t, bool)
                                                     and 0 <= t < n for t in toks):
                raise APIError(f"'tokens' must be a list of token ids in [0, {n})", param="tokens")
            return {"content": self.host.model.detokenize(toks)}
        return await self._json_route(request, fn)

    async def health(self, request: Request) -> Response:
        from zinc.machine import host_info

        eng = self.host.engine
        info = host_info()
        return JSONResponse({
            "status": "loading" if self.host.loading else "ok", "model": self.host.model_id,
            "model_path": str(getattr(self.host.model, "path", "")), "backend": self.config.backend,
            "device": self.config.device, "n_ctx": eng.n_ctx,
            "memory": {"ram_total": info.get("ram_total"), "ram_available": info.get("ram_available")},
            "requests": {"running": eng.n_running, "queued": eng.n_waiting,
                         "slots": eng.scheduler.max_running},
            "grammar": _grammar_ok(), "uptime_s": round(time.time() - self.started, 1)})

    async def metrics_route(self, request: Request) -> Response:
        try:
            self._auth(request)
        except APIError as e:
            return _error(e)
        eng = self.host.engine
        return PlainTextResponse(self.metrics.render(eng.n_running, eng.n_waiting),
                                 media_type="text/plain; version=0.0.4")

    async def index(self, request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


def _grammar_ok() -> bool:
    from zinc.server.grammar import available

    return available()


def create_app(host: Any, config: ServerConfig | None = None) -> Starlette:
    """The Starlette app serving `host` (a service.ModelHost)."""
    from zinc.server import models_api

    config = config or ServerConfig()
    api = ZincAPI(host, config)
    routes = [
        Route("/", api.index),
        Route("/v1/chat/completions", api.chat, methods=["POST"]),
        Route("/v1/completions", api.completions, methods=["POST"]),
        Route("/chat/completions", api.chat, methods=["POST"]),
        Route("/completions", api.completions, methods=["POST"]),
        Route("/tokenize", api.tokenize, methods=["POST"]),
        Route("/detokenize", api.detokenize, methods=["POST"]),
        Route("/health", api.health),
        Route("/metrics", api.metrics_route),
        *models_api.routes(api),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes)
    if config.cors_origins:
        from starlette.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=list(config.cors_origins), allow_methods=["*"],
                           allow_headers=["*"])
    app.state.api = api
    return app
