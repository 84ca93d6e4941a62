"""The sequence cache: K, V and positions per attention layer, recurrent state per DeltaNet layer.

Attention layers come in two kinds (spec common-ops §3):

* full attention: `n_ctx` cells, the token at position p lives in cell p;
* sliding window `w`: a ring of `min(n_ctx, w + n_ubatch - 1)` cells, the token at position p lives
  in cell `p % size`. A step of at most `n_ubatch` tokens can then never overwrite a key that one of
  its own queries still sees (the oldest key a query at p0 needs is p0 - w + 1, the newest write
  is at p0 + n_ubatch - 1).

The cells' type (`dtype`) is "f32", "f16" or "q8_0" (`Ops.kv_cells`; the backend's `kv_types`).
Each cell also stores its token position (-1 = empty); attention builds its causal and window mask
from those positions, so the storage order never matters. `begin(pos)` prepares the cell indices of
a step (prefill of many tokens or decode of one), `end()` advances `n_past`.

Recurrent layers (Gated DeltaNet, spec arch-qwen35.md §3.2) keep, in float32 whatever the KV type,
the last `K - 1` inputs of their causal conv (`conv`, (K-1, C)) and one state matrix per value head
(`ssm`, (Hv, S, S)); the layer's ops update both in place. That state summarises every token seen,
so it can only be reset, never rolled back to an earlier position. A layer whose layout entry is
None stores nothing (Gemma 4's shared-KV layers read another layer's cache).

`CacheGroup` steps several sequences' caches together (batched decode): the rows of one step belong
to its caches in order, `layer(il)` gives the ops a `GroupLayer` (every sequence's cells or state of
layer il, plus a backend's table of them, `Ops.kv_tables`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from zinc.backends.base import Ops
from zinc.errors import ZincError
from zinc.options import KV_BYTES


@dataclass(frozen=True)
class LayerCacheSpec:
    """What one attention layer stores: KV heads, head dims, and its window (0 = full attention)."""

    n_head_kv: int
    head_dim_k: int
    head_dim_v: int
    window: int = 0


@dataclass(frozen=True)
class RecurrentCacheSpec:
    """What one recurrent layer keeps: its conv window (K-1 inputs of C channels) and Hv S x S states."""

    conv_channels: int
    conv_kernel: int
    n_head: int
    head_dim: int

    @property
    def nbytes(self) -> int:
        """The state's bytes (float32)."""
        return 4 * ((self.conv_kernel - 1) * self.conv_channels + self.n_head * self.head_dim * self.head_dim)


class LayerState:
    """One recurrent layer's conv window and delta-rule state, zero at the start of a sequence."""

    def __init__(self, ops: Ops, spec: RecurrentCacheSpec) -> None:
        self.spec, self.ops = spec, ops
        self.conv = ops.zeros((spec.conv_kernel - 1, spec.conv_channels), "f32")
        self.ssm = ops.zeros((spec.n_head, spec.head_dim, spec.head_dim), "f32")

    def reset(self) -> None:
        """Zero the state in place (`ops.fill`: a captured decode step keeps reading these buffers; new
        ones would make the CUDA backend capture the step again; GPU backends zero on the device)."""
        self.conv = self.ops.fill(self.conv, 0.0, "f32")
        self.ssm = self.ops.fill(self.ssm, 0.0, "f32")

    @property
    def nbytes(self) -> int:
        return self.spec.nbytes


class _Slots:
    """A step's cell indices, uploaded when an op first asks for them (a replayed CUDA graph or a batched kernel
    that works them out on the device never does)."""

    def __init__(self, ops: Ops, host: np.ndarray) -> None:
        self.ops, self.host, self.array = ops, host, None

    def get(self) -> Any:
        if self.array is None:
            self.array = self.ops.from_numpy(self.host)
        return self.array


class LayerKV:
    """One layer's buffers plus the current step's cell indices (`slots`) and readable extent (`n_kv`)."""

    def __init__(self, ops: Ops, spec: LayerCacheSpec, size: int, dtype: str) -> None:
        self.spec, self.size, self.window = spec, size, spec.window
        self.k = ops.kv_cells((size, spec.n_head_kv, spec.head_dim_k), dtype)
        self.v = ops.kv_cells((size, spec.n_head_kv, spec.head_dim_v), dtype)
        self.pos = ops.full((size,), -1, "i32")
        self._slots: _Slots | None = None
        self.n_kv = 0

    @property
    def slots(self) -> Any:
        """The cells the step's tokens go to (position % size), on the backend."""
        return None if self._slots is None else self._slots.get()


class KVCache:
    """Per-layer storage for one sequence: KV (sized from the context length) or recurrent state."""

    def __init__(self, ops: Ops, layout: Sequence[LayerCacheSpec | RecurrentCacheSpec | None], n_ctx: int,
                 n_ubatch: int = 512, dtype: str = "f32") -> None:
        if n_ctx <= 0 or n_ubatch <= 0:
            raise ValueError(f"n_ctx and n_ubatch must be positive, got {n_ctx}, {n_ubatch}")
        self.ops, self.n_ctx, self.n_ubatch, self.dtype = ops, n_ctx, n_ubatch, dtype
        self.layout = list(layout)
        self.layers: list[Any] = [self._make(s) for s in self.layout]
        self._kv = [lk for lk in self.layers if isinstance(lk, LayerKV)]  # (fixed: `begin` walks them each step)
        self.n_past = 0
        self._pending = 0

    def _make(self, s: LayerCacheSpec | RecurrentCacheSpec | None) -> Any:
        if s is None:
            return None
        if isinstance(s, RecurrentCacheSpec):
            return LayerState(self.ops, s)
        return LayerKV(self.ops, s, self._size(s), self.dtype)

    @property
    def kv_layers(self) -> list[LayerKV]:
        return self._kv

    @property
    def recurrent_layers(self) -> list[LayerState]:
        return [ls for ls in self.layers if isinstance(ls, LayerState)]

    def _size(self, s: LayerCacheSpec) -> int:
        return self.n_ctx if s.window <= 0 else min(self.n_ctx, s.window + self.n_ubatch - 1)

    def layer(self, il: int) -> Any:
        """Layer il's LayerKV or LayerState (None for a layer that stores nothing)."""
        return self.layers[il]

    @property
    def nbytes(self) -> int:
        item = KV_BYTES[self.dtype]
        kv = sum(int(lk.size * lk.spec.n_head_kv * (lk.spec.head_dim_k + lk.spec.head_dim_v) * item)
                 for lk in self.kv_layers)
        return kv + sum(ls.nbytes for ls in self.recurrent_layers)

    def begin(self, pos: np.ndarray) -> None:
        """Prepare a step whose tokens sit at the consecutive positions `pos` (host array)."""
        pos = np.asarray(pos, np.int64)
        if len(pos) == 0:
            raise ValueError("a step needs at least one token")
        if len(pos) > self.n_ubatch:
            raise ZincError(f"a step of {len(pos)} tokens exceeds n_ubatch={self.n_ubatch}; split it")
        first, last = int(pos[0]), int(pos[-1])
        if first != self.n_past or last - first != len(pos) - 1 or (len(pos) > 2 and np.any(np.diff(pos) != 1)):
            raise ZincError(f"step positions must continue the cache at {self.n_past} without gaps")
        if last >= self.n_ctx:
            raise ZincError(f"context is full: position {last} does not fit n_ctx={self.n_ctx}")
        by_size: dict[int, tuple[_Slots, int]] = {}
        for lk in self._kv:
            hit = by_size.get(lk.size)
            if hit is None:
                hit = by_size[lk.size] = (_Slots(self.ops, (pos % lk.size).astype(np.int32)), min(lk.size, last + 1))
            lk._slots, lk.n_kv = hit
        self._pending = last + 1

    def end(self) -> None:
        """The step's keys and values are written: advance `n_past`."""
        self.n_past = self._pending

    def advance(self, n: int) -> None:
        """The device ran `n` single-token steps itself (a device-side greedy loop) from `n_past`."""
        if not 0 <= n <= self.n_ctx - self.n_past:
            raise ZincError(f"context is full: {n} more tokens do not fit after {self.n_past} (n_ctx={self.n_ctx})")
        self.n_past = self._pending = self.n_past + n

    def reset(self) -> None:
        """Forget every token (the KV buffers are kept and reused, recurrent state is zeroed)."""
        for lk in self.kv_layers:
            lk.pos = self.ops.fill(lk.pos, -1, "i32")
        for ls in self.recurrent_layers:
            ls.reset()
        self.n_past = self._pending = 0

    def truncate_problem(self, n: int) -> str | None:
        """Why `truncate(n)` cannot keep the first n tokens; None when it can."""
        if not 0 <= n <= self.n_past:
            return f"cannot truncate to {n} tokens: the cache holds {self.n_past}"
        if n in (0, self.n_past):
            return None
        if self.recurrent_layers:
            return f"cannot roll recurrent state back to {n} tokens: it can only be reset"
        for lk in self.kv_layers:
            if lk.size < self.n_ctx and self.n_past - lk.size > n - lk.window:
                return f"cannot roll the sliding-window cache back to {n}: its keys were overwritten"
        return None

    def truncate(self, n: int) -> None:
        """Keep the first `n` tokens only (to re-evaluate from there, or to reuse a prompt's prefix): any n for
        attention caches whose ring layers still hold the window before n; 0 or all for recurrent state."""
        problem = self.truncate_problem(n)
        if problem is not None:
            raise (ValueError if not 0 <= n <= self.n_past else ZincError)(problem)
        if n == 0:
            self.reset()
            return
        if n == self.n_past:
            return
        for lk in self.kv_layers:
            p = self.ops.to_numpy(lk.pos).copy()
            p[p >= n] = -1
            lk.pos = self.ops.overwrite(lk.pos, p.astype(np.int32))
        self.n_past = self._pending = n


class GroupLayer:
    """Layer il of every cache of a `CacheGroup`: the sequences' `LayerKV`s or `LayerState`s in row order
    (`parts`), their row counts, and the backend's table of them (None where the backend keeps none)."""

    def __init__(self, group: "CacheGroup", il: int, table: Any) -> None:
        self.group, self.il, self.counts, self.table = group, il, group.counts, table

    @property
    def parts(self) -> list[Any]:
        """The sequences' own layers: a step that reads them has their cells' addresses (`CacheGroup.addressed`)."""
        self.group.addressed = True
        return [c.layer(self.il) for c in self.group.caches]


class CacheGroup:
    """The caches of several sequences stepped in one forward: a step's first `counts[0]` rows continue
    `caches[0]`, the next `counts[1]` rows `caches[1]`, and so on (each cache at most once)."""

    def __init__(self, ops: Ops, caches: Sequence[KVCache], counts: Sequence[int]) -> None:
        if len(caches) != len(counts) or not caches:
            raise ValueError(f"a cache group needs one row count per cache, got {len(caches)} caches, "
                             f"{len(counts)} counts")
        if len({id(c) for c in caches}) != len(caches):
            raise ValueError("a cache group holds each cache once")
        self.ops, self.caches, self.counts = ops, list(caches), tuple(int(n) for n in counts)
        self.tables: Any = None
        # whether a step read a sequence's own layers (not only the tables): a captured step then holds those
        # caches' addresses and replays on them only (the CUDA backend's graphs)
        self.addressed = False

    def begin(self) -> None:
        """Prepare every cache for its next `counts[i]` tokens (`KVCache.begin`), then the backend's tables."""
        for c, n in zip(self.caches, self.counts):
            c.begin(np.arange(c.n_past, c.n_past + n))
        self.tables = self.ops.kv_tables(self)

    def end(self) -> None:
        for c in self.caches:
            c.end()

    def layer(self, il: int) -> GroupLayer:
        """Layer il of every sequence: its cells, or its recurrent state."""
        return GroupLayer(self, il, None if self.tables is None else self.tables[il])
