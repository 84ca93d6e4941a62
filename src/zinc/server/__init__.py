"""The OpenAI-compatible HTTP server and the browser chat UI (`zinc serve`, `zinc chat`).

    from zinc.server import serve_model
    serve_model(model, model_id="my-model", host="127.0.0.1", port=8080)

See `app` (routes), `openai` (request validation, response shapes), `generation` (running requests
on the engine), `grammar` (constrained decoding), `service` (the loaded model and its engine),
`metrics` (Prometheus) and `static/` (the UI).
"""

from __future__ import annotations

from typing import Any


def build(model: Any, model_id: str, store: Any = None, loader: Any = None, config: Any = None,
          max_running: int = 4) -> tuple[Any, Any]:
    """(app, host) for a loaded model."""
    from zinc.server.app import create_app
    from zinc.server.service import ModelHost

    host = ModelHost(model, model_id, store=store, loader=loader, max_running=max_running)
    return create_app(host, config), host


def serve_model(model: Any, model_id: str, host: str = "127.0.0.1", port: int = 8080, **kw: Any) -> None:
    """Serve `model` until interrupted (blocks)."""
    import uvicorn

    app, mh = build(model, model_id, **kw)
    try:
        uvicorn.run(app, host=host, port=port, log_level="warning")
    finally:
        mh.shutdown()
