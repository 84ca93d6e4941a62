"""The public Python API: `load()` a GGUF model and get a `Model` that tokenizes and computes logits.

    m = zinc.load("model.gguf", backend="cpu", n_ctx=4096)
    ids = m.tokenize("Hello", add_special=True, parse_special=False)
    logits = m.logits(ids)            # (len(ids), n_vocab) float32, teacher-forced from position 0
    text = m.detokenize(ids)
    m.metadata, m.config

For step-by-step use (the engine): `cache = m.new_cache()`, then `m.forward(ids, cache)` any number
of times; each call continues the sequence where the cache ends.

Generation: `m.generate("Once upon", max_tokens=32)` and `m.chat([{"role": "user", ...}])` run on the
model's engine (`zinc.engine`); `stream=True` gives the text as it comes.
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from zinc.backends import get_backend
from zinc.backends.base import BaseOps, Ops
from zinc.engine.cache import CacheGroup, KVCache
from zinc.engine.sampler import TOP_LOGITS, TopLogits
from zinc.errors import ZincError
from zinc.gguf import GGUFFile
from zinc.models.base import Batch, Config, load_weights
from zinc.models.registry import get_architecture


class Model:
    """A loaded model: config, weights on a backend, tokenizer (built on first use), KV caches."""

    def __init__(self, path: str | os.PathLike, backend: str | Ops = "cpu", n_ctx: int = 4096,
                 n_ubatch: int = 512, **backend_options: Any) -> None:
        self.path = Path(path)
        self.gguf = GGUFFile(self.path)
        try:
            self.arch = get_architecture(self.gguf.architecture, self.path)
            self.config: Config = self.arch.config(self.gguf)
            self.ops: Ops = get_backend(backend, **backend_options)
            self.weights = load_weights(self.ops, self.gguf, self.arch.tensors(self.config))
        except BaseException:
            self.gguf.close()
            raise
        self.n_ctx = int(n_ctx) if n_ctx and n_ctx > 0 else self.config.n_ctx_train
        self.n_ubatch = max(1, min(int(n_ubatch), self.n_ctx))
        self._tokenizer: Any = None
        self._cache: KVCache | None = None

    # -- metadata ---------------------------------------------------------------------------------
    @property
    def metadata(self) -> dict[str, Any]:
        return self.gguf.metadata

    @property
    def n_vocab(self) -> int:
        return self.config.n_vocab

    def __repr__(self) -> str:
        return (f"Model({str(self.path)!r}, arch={self.config.arch!r}, backend={self.ops.name!r}, "
                f"n_ctx={self.n_ctx})")

    # -- text ---------------------------------------------------------------------------------------
    @property
    def tokenizer(self) -> Any:
        if self._tokenizer is None:
            from zinc.tokenizer import Tokenizer

            self._tokenizer = Tokenizer.from_metadata(self.metadata, source=str(self.path))
        return self._tokenizer

    def tokenize(self, text: str, add_special: bool = True, parse_special: bool = False) -> list[int]:
        return list(self.tokenizer.encode(text, add_special=add_special, parse_special=parse_special))

    def detokenize(self, ids: Iterable[int]) -> str:
        return self.tokenizer.decode([int(i) for i in ids])

    # -- compute ------------------------------------------------------------------------------------
    def new_cache(self, n_ctx: int | None = None, dtype: str | None = None) -> KVCache:
        """An empty cache (KV cells, recurrent state) for one sequence of up to `n_ctx` tokens (default: n_ctx).

        `dtype` of the KV cells: "f32", "f16" or "q8_0" (one of the backend's `kv_types`); by default the
        backend's `kv_dtype` (the backend option of that name: `load(path, backend="cuda", kv_dtype="q8_0")`)."""
        dtype = dtype or self.ops.kv_dtype
        return KVCache(self.ops, self.arch.cache_layout(self.config), n_ctx or self.n_ctx, self.n_ubatch, dtype)

    def forward(self, ids: Iterable[int], cache: KVCache, last_only: bool = False, top: int = 0) -> Any:
        """Run `ids` after what `cache` holds; float32 logits for every token (or only the last). With `top`:
        the last token's `TopLogits` (its `top` best logits and their log-sum-exp: what sampling needs, without
        the whole row leaving the device)."""
        ids = self._check_ids(ids)
        last_only = last_only or top > 0
        result: Any = np.empty((1 if last_only else len(ids), self.n_vocab), np.float32)
        for s in range(0, len(ids), self.n_ubatch):
            chunk = ids[s:s + self.n_ubatch]
            batch = Batch.make(self.ops, chunk, cache.n_past, last_only=last_only)
            cache.begin(batch.pos_host)
            out = self.ops.run_step(self.arch.forward, self.config, self.weights, batch, cache)
            cache.end()
            if not last_only:
                result[s:s + len(chunk)] = self.ops.to_numpy(out)
            elif s + len(chunk) == len(ids):
                result = self._top_rows(out, top)[0] if top > 0 else self.ops.to_numpy(out)
        return result

    def _top_rows(self, out: Any, k: int) -> list[TopLogits]:
        """Each row of the step's logits `out` as `TopLogits` (the whole row fetched only if asked)."""
        vals, ids, lse = self.ops.top_logits(out, k)
        rows: list[np.ndarray] = []

        def full(i: int) -> np.ndarray:
            if not rows:
                rows.append(np.asarray(self.ops.to_numpy(out), np.float32).reshape(len(lse), -1))
            return rows[0][i]

        return [TopLogits(ids[i], vals[i].astype(np.float64), float(lse[i]), self.n_vocab, partial(full, i))
                for i in range(len(lse))]

    def forward_seqs(self, items: Iterable[tuple[Iterable[int], KVCache]], argmax: bool = False,
                     top: int = 0) -> Any:
        """One step over several sequences (batched decode): each (ids, cache) runs its ids after what its cache
        holds, all in one forward (the weights read once for every row). Returns float32 logits of each
        sequence's last token (len(items), n_vocab), or with `argmax` their greedy ids (len(items),) int32
        (picked on the device: only those come back), or with `top` each one's `TopLogits` (a list). Each cache
        at most once; at most n_ubatch rows in all."""
        items = [(self._check_ids(ids), cache) for ids, cache in items]
        if not items:
            raise ValueError("forward_seqs needs at least one (ids, cache) item")
        n = sum(len(ids) for ids, _ in items)
        if n > self.n_ubatch:
            raise ZincError(f"a step of {n} tokens over {len(items)} sequences exceeds n_ubatch={self.n_ubatch}")
        group = CacheGroup(self.ops, [c for _, c in items], [len(ids) for ids, _ in items])
        group.begin()
        batch = Batch.make_seqs(self.ops, [(ids, c.n_past) for ids, c in items], last_only=True)
        out = self.ops.run_step(self.arch.forward, self.config, self.weights, batch, group)
        group.end()
        if top > 0 and not argmax:
            return self._top_rows(out, top)
        return self.ops.to_numpy(self.ops.argmax(out) if argmax else out)

    def greedy_seqs(self, firsts: Sequence[int], caches: Sequence[KVCache], n: int) -> np.ndarray:
        """Feed firsts[i] after what caches[i] holds and greedily decode n tokens of every sequence together
        (`forward_seqs` steps): the chosen ids (len(caches), n). A backend that can keeps the loop on the device
        (CUDA: a captured group step whose rows' argmax are the next step's tokens); else a step at a time."""
        firsts = self._check_ids(firsts)
        caches = list(caches)
        if len(firsts) != len(caches) or not caches:
            raise ValueError(f"greedy_seqs needs one first token per cache, got {len(firsts)} for {len(caches)}")
        if n <= 0:
            return np.zeros((len(caches), 0), np.int32)
        self._check_room(caches, n)
        batch, group = self._loop_step(firsts, caches, group=True)
        ran = self.ops.greedy_steps(self.arch.forward, self.config, self.weights, batch, group, n)
        rows = [] if ran is None else [np.asarray(r, np.int32) for r in ran]  # the steps the device ran
        for c in caches:
            c.advance(len(rows))  # (with none run, begin() above only checked the positions)
        toks = rows[-1].tolist() if rows else firsts
        while len(rows) < n:
            rows.append(self.forward_seqs([([t], c) for t, c in zip(toks, caches)], argmax=True).astype(np.int32))
            toks = rows[-1].tolist()
        return np.stack(rows, 1)

    def start_seqs(self, firsts: Sequence[int], caches: Sequence[KVCache], n: int, rows: Sequence[tuple] | None = None,
                   uniforms: np.ndarray | None = None, top: int = TOP_LOGITS) -> "DeviceChunk | None":
        """Feed firsts[i] after what caches[i] holds and decode up to n tokens of every sequence in a loop on the
        device: greedy (`rows` None: argmax of the raw logits) or drawn by rows[i], sequence i's sampler settings
        (`Sampler.device_row(top)`), with uniforms[s, i] its s-th draw (`Sampler.draw_ahead`). Returns at once with a
        `DeviceChunk` of the steps launched (every cache advanced by them); its `follow` launches the next steps
        before its ids are read. One sequence takes the single-sequence step (as `greedy`), several a group's
        (`greedy_seqs`). None where the backend has no such loop (sampled rows; greedy ones then run `greedy` /
        `greedy_seqs` here, a chunk whose ids are already read)."""
        firsts = self._check_ids(firsts)
        caches = list(caches)
        if len(firsts) != len(caches) or (rows is not None and len(rows) != len(caches)) or not caches:
            raise ValueError(f"start_seqs needs a first token (and settings) per cache, got {len(firsts)} for "
                             f"{len(caches)}")
        if n <= 0:
            raise ValueError(f"start_seqs needs n >= 1, got {n}")
        if rows is not None:
            uniforms = np.asarray(uniforms, np.float64)
            if uniforms.shape != (n, len(caches)):
                raise ValueError(f"uniforms must be ({n}, {len(caches)}), got {uniforms.shape}")
        self._check_room(caches, n)
        if not self.loops_on_device:
            return None if rows is not None else self._greedy_chunk(firsts, caches, n)
        batch, target = self._loop_step(firsts, caches, group=len(caches) > 1)
        pending = self.ops.loop_steps(self.arch.forward, self.config, self.weights, batch, target, n,
                                      None if rows is None else np.asarray(rows, np.float64), uniforms, top)
        if pending is None:  # (begin() above only checked the positions)
            return None if rows is not None else self._greedy_chunk(firsts, caches, n)
        return DeviceChunk(caches, pending)

    def _check_room(self, caches: list[KVCache], n: int) -> None:
        """ZincError unless n more one-token steps of these sequences fit: one step's rows, each context."""
        if len(caches) > self.n_ubatch:
            raise ZincError(f"{len(caches)} sequences in one step exceed n_ubatch={self.n_ubatch}")
        for c in caches:
            if c.n_past + n > c.n_ctx:
                raise ZincError(f"context is full: {n} tokens do not fit after {c.n_past} (n_ctx={c.n_ctx})")

    def _loop_step(self, firsts: list[int], caches: list[KVCache], group: bool) -> tuple[Batch, Any]:
        """The first step of a device loop: the batch of firsts[i] after caches[i] and what it runs on, the cache
        (one sequence's step) or a `CacheGroup` (a group's), begun (`begin` only checks: a loop advances them)."""
        if not group:
            batch = Batch.make(self.ops, firsts, caches[0].n_past, last_only=True)
            caches[0].begin(batch.pos_host)
            return batch, caches[0]
        target = CacheGroup(self.ops, caches, [1] * len(caches))
        target.begin()
        return Batch.make_seqs(self.ops, [([t], c.n_past) for t, c in zip(firsts, caches)], last_only=True), target

    def _greedy_chunk(self, firsts: list[int], caches: list[KVCache], n: int) -> "DeviceChunk":
        """`greedy` / `greedy_seqs` as a chunk already read."""
        ids = ([self.greedy(firsts[0], caches[0], n)] if len(caches) == 1 else self.greedy_seqs(firsts, caches, n))
        return DeviceChunk(caches, _Done(np.asarray(ids, np.int32).T), advanced=True)

    def sample_seqs(self, firsts: Sequence[int], caches: Sequence[KVCache], n: int, rows: Sequence[tuple],
                    uniforms: np.ndarray, top: int = TOP_LOGITS) -> np.ndarray:
        """`start_seqs` with sampler settings, waited for: the ids (len(caches), steps) of the steps the device ran
        (steps <= n; none on a backend without a device loop: the caller samples on the host); -1 where a step's
        logits were not finite."""
        chunk = self.start_seqs(firsts, caches, n, rows, uniforms, top) if n > 0 else None
        return np.zeros((len(caches), 0), np.int32) if chunk is None else chunk.ids()

    @property
    def loops_on_device(self) -> bool:
        """Whether the backend runs decode loops on the device without waiting (`start_seqs`), sampled ones too."""
        return getattr(type(self.ops), "loop_steps", BaseOps.loop_steps) is not BaseOps.loop_steps

    @property
    def greedy_on_device(self) -> bool:
        """Whether `greedy` keeps its loop on the device (the backend has a device-side greedy loop)."""
        return getattr(type(self.ops), "greedy_steps", BaseOps.greedy_steps) is not BaseOps.greedy_steps

    def greedy(self, first: int, cache: KVCache, n: int) -> list[int]:
        """Feed `first` after what `cache` holds and greedily decode `n` tokens: the n chosen ids.

        A backend that can keeps the loop on the device (CUDA: a captured step whose argmax is the
        next step's token, the ids read back once at the end); otherwise one step at a time."""
        first = self._check_ids([first])[0]
        if n <= 0:
            return []
        self._check_room([cache], n)
        batch, _ = self._loop_step([first], [cache], group=False)
        ids = self.ops.greedy_steps(self.arch.forward, self.config, self.weights, batch, cache, n)
        out = [] if ids is None else [int(i) for i in ids]  # the steps the device ran (maybe not all n)
        cache.advance(len(out))  # (with none run, begin() above only checked the position)
        tok = out[-1] if out else first
        while len(out) < n:
            tok = int(np.argmax(self.forward([tok], cache, last_only=True)[-1]))
            out.append(tok)
        return out

    def logits(self, ids: Iterable[int]) -> np.ndarray:
        """Teacher-forced logits (len(ids), n_vocab) float32, from an empty context."""
        ids = self._check_ids(ids)
        if self._cache is None or self._cache.n_ctx < len(ids):
            self._cache = self.new_cache(max(self.n_ctx, len(ids)))
        self._cache.reset()
        return self.forward(ids, self._cache)

    def _check_ids(self, ids: Iterable[int]) -> list[int]:
        ids = [int(i) for i in ids]
        if not ids:
            raise ValueError("need at least one token id")
        bad = [i for i in ids if not 0 <= i < self.n_vocab]
        if bad:
            raise ValueError(f"token id {bad[0]} is out of range [0, {self.n_vocab})")
        return ids

    def close(self) -> None:
        """Drop the weights and caches and close the file."""
        self.weights = None
        self._cache = None
        try:
            self.gguf.close()
        except BufferError:
            pass

    # -- generation (zinc.engine.generate) -----------------------------------------------------------
    def generate(self, prompt: str | Iterable[int], **options: Any) -> Any:
        """Complete a prompt (text or token ids): a GenerationResult, or a TextStream with stream=True.

        Options: max_tokens (256), temperature, top_p, top_k, min_p, seed, stop, repeat_penalty,
        presence_penalty, frequency_penalty, logit_bias, logprobs, stream; see zinc.engine.generate.
        """
        from zinc.engine.generate import generate

        return generate(self, prompt if isinstance(prompt, str) else list(prompt), **options)

    def chat(self, messages: list[dict], **options: Any) -> Any:
        """Reply to chat messages with the GGUF's chat template: a ChatResult (content, reasoning,
        tool calls, usage), or a ChatStream with stream=True; see zinc.engine.generate.chat."""
        from zinc.engine.generate import chat

        return chat(self, messages, **options)


class _Done:
    """A chunk whose ids were read already (a backend without an asynchronous loop)."""

    def __init__(self, ids: np.ndarray) -> None:
        self._ids, self.n = ids, len(ids)

    def ids(self) -> np.ndarray:
        return self._ids

    def follow(self, n: int, uniforms: Any = None) -> None:
        return None


class DeviceChunk:
    """Steps of a decode loop on the device (`Model.start_seqs`): `steps` of them launched for every sequence, its
    caches advanced by them. `ids()` waits for their ids (sequences, steps); `follow(n, uniforms)` launches the next n
    steps of the same loop from where these end, before these are read (uniforms (n, sequences): a sampled loop's
    draws for them), valid while nothing else has run on these caches since; None where the loop cannot go on so."""

    def __init__(self, caches: list[KVCache], pending: Any, advanced: bool = False) -> None:
        self.caches, self.pending, self.steps = caches, pending, int(pending.n)
        if not advanced:
            for c in caches:
                c.advance(self.steps)

    def ids(self) -> np.ndarray:
        return np.asarray(self.pending.ids(), np.int32).reshape(self.steps, len(self.caches)).T.copy()

    def follow(self, n: int, uniforms: np.ndarray | None = None) -> "DeviceChunk | None":
        if n <= 0 or any(c.n_past + n > c.n_ctx for c in self.caches):
            return None
        if uniforms is not None:
            uniforms = np.ascontiguousarray(uniforms, np.float64).reshape(n, len(self.caches))
        pending = self.pending.follow(n, uniforms)
        return None if pending is None else DeviceChunk(self.caches, pending)


def load(path: str | os.PathLike, backend: str | Ops = "cpu", n_ctx: int = 4096, **options: Any) -> Model:
    """Load a GGUF model on a backend ("cpu": NumPy). `n_ctx` <= 0 means the training context.

    Raises UnsupportedModelError for an architecture zinc does not implement, GGUFError for a
    malformed file or a missing/misshapen tensor, BackendUnavailableError when the backend cannot run
    the file's weight types.
    """
    return Model(path, backend=backend, n_ctx=n_ctx, **options)
