"""The server's state: the loaded model and its engine, model switching, pulls, and the bridge from
the engine's threads to asyncio (`Job`).

    host = ModelHost(model, model_id="gemma3-270m", store=ModelStore(home), loader=fn)
    job = host.submit(ids, params, decode_special=True)   # inside the event loop
    async for ev in job: ...                              # zinc.engine Events
    job.cancel()

One model is loaded at a time; its `GrammarEngine` runs in a background thread and every request
(API and UI alike) queues there. `activate(id)` loads another model off the loop and swaps it in
once loaded; the old engine's requests are cancelled.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any, AsyncIterator, Callable

from zinc.engine import generate as gen_mod
from zinc.engine.engine import Event, RequestHandle
from zinc.server.grammar import GrammarEngine


class Job:
    """One engine request seen from asyncio: its events arrive through an asyncio.Queue."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.queue: asyncio.Queue[Event] = asyncio.Queue()
        self.handle: RequestHandle | None = None
        self.t0 = time.perf_counter()

    def push(self, ev: Event) -> None:  # called from the engine thread
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, ev)
        except RuntimeError:  # the loop is closed: nobody is listening any more
            pass

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._events()

    async def _events(self) -> AsyncIterator[Event]:
        while True:
            ev = await self.queue.get()
            yield ev
            if ev.kind == "done":
                return

    def cancel(self) -> None:
        if self.handle is not None and not self.handle.done:
            self.handle.cancel()


class ModelHost:
    """The loaded model, its engine and the model catalog operations the API offers."""

    def __init__(self, model: Any, model_id: str, store: Any = None,
                 loader: Callable[[Path], Any] | None = None, max_running: int = 4) -> None:
        self.store, self.loader, self.max_running = store, loader, max_running
        self.model, self.model_id, self.engine = None, model_id, None
        self.pulls: dict[str, dict[str, Any]] = {}
        self.loading: str | None = None
        self._lock = threading.Lock()
        self._install(model, model_id)

    def _install(self, model: Any, model_id: str) -> None:
        engine = GrammarEngine(model, max_running=self.max_running)
        with gen_mod._LOCK:  # Model.generate / Model.chat share this engine too
            gen_mod._ENGINES[model] = engine
        engine.start()
        old = self.engine
        self.model, self.model_id, self.engine = model, model_id, engine
        if old is not None:
            old.shutdown(timeout=30)

    def submit(self, ids: list[int], params: Any, decode_special: bool = False, cache_prompt: bool = True) -> Job:
        job = Job(asyncio.get_running_loop())
        job.handle = self.engine.submit(ids, params, decode_special=decode_special, on_event=job.push,
                                        cache_prompt=cache_prompt)
        return job

    # -- catalog ---------------------------------------------------------------------------------
    async def activate(self, model_id: str) -> None:
        """Load an installed catalog model and make it the served one (CatalogError if not installed)."""
        if self.store is None or self.loader is None:
            raise RuntimeError("this server cannot switch models (started with a model file)")
        path = self.store.model_path(model_id)
        with self._lock:
            if self.loading:
                raise RuntimeError(f"model {self.loading!r} is being loaded")
            self.loading = model_id
        try:
            model = await asyncio.to_thread(self.loader, path)
            self._install(model, model_id)
        finally:
            self.loading = None

    def start_pull(self, entry: Any, endpoint: str) -> dict[str, Any]:
        """Download a catalog model in a background thread; progress in `self.pulls[id]`."""
        from zinc.catalog.pull import pull

        with self._lock:
            cur = self.pulls.get(entry.id)
            if cur and cur["status"] == "downloading":
                return cur
            state = self.pulls[entry.id] = {"status": "downloading", "done": 0, "total": entry.size,
                                            "error": None, "started": time.time()}

        def progress(done: int, total: int | None) -> None:
            state["done"] = done
            if total:
                state["total"] = total

        def work() -> None:
            try:
                pull(entry, self.store, endpoint, progress=progress)
                state["status"] = "done"
            except Exception as e:  # noqa: BLE001 - reported through /v1/models
                state["status"], state["error"] = "error", str(e)

        threading.Thread(target=work, name=f"zinc-pull-{entry.id}", daemon=True).start()
        return state

    def shutdown(self) -> None:
        if self.engine is not None:
            self.engine.shutdown(timeout=10)
