"""Model management routes: GET /v1/models, POST /v1/models/activate, /pull, /remove.

`/v1/models` lists the served model first, then the catalog: each entry with ``installed``,
``active`` (the model answering requests), ``fits`` (in this machine's memory), ``size`` and, while a
pull runs or after it ended, ``pull`` ({status, done, total, error}). Ids are checked by
`zinc.catalog.validate_id` / `get_entry` (no paths, no traversal) before anything touches the disk.
"""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from zinc.server.openai import APIError


def _entry(body: Any) -> Any:
    from zinc.catalog import CatalogError, get_entry

    mid = body.get("model") if isinstance(body, dict) else None
    if mid is None and isinstance(body, dict):
        mid = body.get("id")
    if not isinstance(mid, str):
        raise APIError("'model' must be a catalog model id", param="model")
    try:
        return get_entry(mid)
    except CatalogError as e:
        raise APIError(str(e), status=404, param="model", code="model_not_found") from None


def _memory() -> int | None:
    from zinc.machine import host_info

    return host_info().get("ram_total")


def list_models(api: Any) -> dict:
    from zinc.catalog import entries

    host = api.host
    store = host.store
    memory = _memory()
    data: list[dict] = []
    seen = set()
    for e in entries():
        installed = store.is_installed(e) if store is not None else False
        item = {"id": e.id, "object": "model", "created": 0, "owned_by": "zinc", "name": e.name,
                "family": e.family, "arch": e.arch, "params": e.params, "quant": e.quant, "size": e.size,
                "installed": installed, "active": e.id == host.model_id,
                "fits": None if memory is None else e.size * 1.1 + 512 * 2**20 <= memory,
                "partial_bytes": store.partial_bytes(e) if store is not None else 0,
                "embedded": e.embedded}
        if e.id in host.pulls:
            item["pull"] = dict(host.pulls[e.id])
        data.append(item)
        seen.add(e.id)
    if host.model_id not in seen:
        data.insert(0, {"id": host.model_id, "object": "model", "created": 0, "owned_by": "zinc",
                        "name": host.model_id, "arch": host.model.config.arch, "installed": True,
                        "active": True, "fits": True})
    data.sort(key=lambda d: not d["active"])
    return {"object": "list", "data": data}


def routes(api: Any) -> list[Route]:
    async def models(body: Any) -> dict:
        return list_models(api)

    async def activate(body: Any) -> dict:
        from zinc.catalog import CatalogError

        e = _entry(body)
        try:
            await api.host.activate(e.id)
        except CatalogError as err:
            raise APIError(str(err), status=409, param="model", code="model_not_installed") from None
        except RuntimeError as err:
            raise APIError(str(err), status=409, code="busy") from None
        except Exception as err:  # noqa: BLE001 - a model that fails to load
            raise APIError(f"cannot load {e.id}: {err}", status=500, type_="server_error") from None
        return {"id": e.id, "active": True}

    async def pull(body: Any) -> dict:
        e = _entry(body)
        if api.host.store is None:
            raise APIError("this server has no model store", status=409)
        state = api.host.start_pull(e, api.config.endpoint)
        return {"id": e.id, "pull": dict(state)}

    async def remove(body: Any) -> dict:
        from zinc.catalog import CatalogError

        e = _entry(body)
        if e.id == api.host.model_id:
            raise APIError(f"{e.id} is the served model; activate another one first", status=409)
        if api.host.store is None:
            raise APIError("this server has no model store", status=409)
        try:
            removed = api.host.store.remove(e.id)
        except CatalogError as err:
            raise APIError(str(err), status=409, param="model") from None
        api.host.pulls.pop(e.id, None)
        return {"id": e.id, "removed": [p.name for p in removed]}

    def wrap(fn: Any) -> Any:
        async def handler(request: Any) -> Any:
            return await api._json_route(request, fn)
        return handler

    return [Route("/v1/models", wrap(models)), Route("/models", wrap(models)),
            Route("/v1/models/activate", wrap(activate), methods=["POST"]),
            Route("/v1/models/pull", wrap(pull), methods=["POST"]),
            Route("/v1/models/remove", wrap(remove), methods=["POST"])]
