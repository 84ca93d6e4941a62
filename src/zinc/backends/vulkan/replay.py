"""Record a single-token decode step once, then replay its dispatches without the model's Python code.

wgpu has no reusable compute bundles, so a `Recording` is the step's command list as the device saw
it: (pipeline, bind group, workgroups) per dispatch plus buffer copies. Replaying re-issues exactly
those calls into a fresh encoder; the Python model code, the ops layer, uniform packing, the pool
and the bind-group cache are skipped.

What changes from one decode step to the next lives in buffers the replay rewrites first (one
`queue.write_buffer` each): the token id, the position, the KV cells to write (`slots`, one buffer
per cache size), the attention extent (`n_kv` per cache size) and the step's RoPE cos/sin tables
(computed on the host like every eager step, so replayed angles equal the reference bit for bit).
Each such buffer is registered with a producer `fn(batch, cache) -> ndarray` while recording; any
other host write or host read inside the step makes it unreplayable (it then always runs eagerly).

The recording holds every buffer its dispatches bind, so the pool never hands them out again while
it lives: replay writes into the very buffers the recorded step used. A recording is made again
when the cache's buffers change (a new cache, a reset recurrent state) and dropped with its cache.
"""

from __future__ import annotations

import weakref
from typing import Any, Callable

import numpy as np

MAX_RECORDINGS = 8  # least recently replayed dropped first


class Recording:
    """One recorded step: its commands, the buffers they bind and the step inputs to rewrite."""

    def __init__(self) -> None:
        self.cmds: list[tuple] = []  # (pipeline, bind group, groups) or (None, src, src_off, dst, dst_off, n)
        self.raw: list[tuple] | None = None  # cmds with wgpu-native handles (Device.replay)
        self.keep: list[Any] = []  # every buffer bound or copied: pinned while the recording lives
        self.writes: dict[int, Any] = {}  # id -> buffer written from the host during the step
        self.inputs: dict[int, tuple[Any, Callable[[Any, Any], np.ndarray]]] = {}  # id -> (buffer, producer)
        self.broken: str | None = None  # why this step cannot be replayed
        self.out: Any = None
        self.tokens: Any = None  # the buffer holding the step's token id (a greedy loop fills it on the GPU)
        self.signature: tuple = ()
        self.cache_ref: Any = None

    def input(self, buf: Any, fn: Callable[[Any, Any], np.ndarray]) -> None:
        """`buf` holds fn(batch, cache) for the step being replayed."""
        self.inputs[id(buf)] = (buf, fn)

    def refuse(self, why: str) -> None:
        if self.broken is None:
            self.broken = why

    def finish(self) -> None:
        unclaimed = [i for i in self.writes if i not in self.inputs]
        if unclaimed:
            self.refuse(f"{len(unclaimed)} host writes inside the step have no producer")
        self.writes = {}


def cache_signature(cache: Any) -> tuple:
    """The buffers a recorded step binds in `cache` (compared by identity)."""
    sig = []
    for layer in cache.layers:
        for name in ("k", "v", "pos", "conv", "ssm"):
            a = getattr(layer, name, None)
            if a is not None:
                sig.append(a._buf)
    return tuple(sig)


class StepReplayer:
    """The recordings of one `VulkanOps`, keyed by (forward, cfg, weights, cache, last_only)."""

    def __init__(self, ops: Any) -> None:
        self.ops = ops
        self.steps: dict[tuple, Recording] = {}
        self.records = 0
        self.replays = 0
        self.refused: dict[tuple, tuple[Any, str]] = {}  # key -> (cache weakref, why): runs eagerly

    @staticmethod
    def _key(forward, cfg, weights, batch, cache) -> tuple:
        return (id(forward), id(cfg), id(weights), id(cache), bool(batch.last_only))

    def find(self, forward, cfg, weights, batch, cache) -> Recording | None:
        """The valid recording of this step (same model, cache and cache buffers), or None."""
        key = self._key(forward, cfg, weights, batch, cache)
        rec = self.steps.get(key)
        if rec is not None and rec.cache_ref() is cache and _same(rec.signature, cache_signature(cache)):
            self.steps[key] = self.steps.pop(key)  # most recently used last
            return rec
        return None

    def run(self, forward, cfg, weights, batch, cache) -> Any:
        key = self._key(forward, cfg, weights, batch, cache)
        for k in [k for k, r in self.steps.items() if r.cache_ref() is None]:
            del self.steps[k]
        for k in [k for k, r in self.refused.items() if r[0]() is None]:
            del self.refused[k]
        no = self.refused.get(key)
        if no is not None and no[0]() is cache:
            return forward(self.ops, cfg, weights, batch, cache)
        rec = self.find(forward, cfg, weights, batch, cache)
        if rec is not None:
            self.replays += 1
            self.ops.dev.replay(rec, [(buf, fn(batch, cache)) for buf, fn in rec.inputs.values()])
            return rec.out
        self.steps.pop(key, None)
        out, rec = self._record(forward, cfg, weights, batch, cache)
        if rec.broken is None:
            rec.signature, rec.cache_ref = cache_signature(cache), weakref.ref(cache)
            self.steps[key] = rec
            while len(self.steps) > MAX_RECORDINGS:
                del self.steps[next(iter(self.steps))]
        else:
            self.refused[key] = (weakref.ref(cache), rec.broken)
        return out

    def _record(self, forward, cfg, weights, batch, cache) -> tuple[Any, Recording]:
        rec = Recording()
        ops, dev = self.ops, self.ops.dev
        rec.input(batch.tokens.buf, lambda b, c: ops._host(b.tokens))
        rec.input(batch.pos.buf, lambda b, c: np.asarray(b.pos_host, np.int32))
        for il, lk in enumerate(cache.layers):
            if getattr(lk, "slots", None) is not None:
                rec.input(lk.slots.buf, lambda b, c, il=il: ops._host(c.layers[il].slots))
        ops._recording, ops._rec_batch = rec, batch
        dev.start_recording(rec)
        try:
            out = forward(ops, cfg, weights, batch, cache)
            out.buf  # a deferred last dispatch (the output projection) belongs to the step
        finally:
            dev.stop_recording()
            ops._recording = ops._rec_batch = None
        rec.finish()
        self.records += 1
        rec.out, rec.tokens = out, batch.tokens.buf
        return out, rec


def _same(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))
