"""CUDA-graph capture and replay of model steps: single-token decode steps and prompt chunks.

A decode graph is captured per (forward, weights, cache, last_only) the first time a one-token step
runs on that cache: the step runs eagerly once (its result is the real one, and it compiles every
kernel), then the same step is captured with static token and position buffers. Later steps copy
their token id and position into those buffers (device to device, no host sync) and replay.
A prompt chunk of T > 1 tokens is captured the same way, keyed by T too, the second time a chunk
of that length runs on that cache (full n_ubatch chunks of long prompts and benchmarks repeat; a
one-off prompt length runs eagerly rather than paying for a capture). Every family's prompt step
captures: while capturing, the ops take their paths without host syncs (routed experts: the grouped
GEMM, its pairs aligned on the GPU, or the matvec over the pairs; recurrent layers: the chunked
delta rule's one kernel a layer); a step that fails to capture runs eagerly from then on.
The graph bakes in the addresses of the cache tensors. A cache changes its tensors in place only
(`CudaOps.fill` / `overwrite`), so a graph replays on the cache object it was captured on without a
check; another object under the same Python id (a freed cache's) is checked by its tensors'
addresses and shapes, and captured again if any differ. Captured ops read the extent of the
attention and the KV cells to write from the position buffer (see `CudaOps.capturing`), so one
graph serves every position.

A decode step of several sequences (one token each, `CacheGroup`) is captured per row count, the second time a
step of that many sequences runs (the first runs eagerly: a server's groups change size as requests come and go,
and a size that does not come again is not worth a capture). Where every op of
the step found the sequences' cells through the group's tables (`CudaOps.kv_tables`: the batched attention), the
graph replays on any caches, the new group's tables copied into the captured ones like the tokens; a step that
read a sequence's own layers (`CacheGroup.addressed`: a layer taken a sequence at a time, as Gemma 3's attention
with its query pre-scale) replays only on caches at the captured addresses, and is captured again for others.
A group's greedy decode (`greedy_seqs`) is such a step followed by each row's argmax, which becomes its
sequence's next token, replayed n times like `greedy` (captured at once: its caller asks for several steps).
`sample` is the same loop with each row's token drawn by the request's sampler settings from the row's best logits
(`kernels/sample.py`), one sequence or a group: the settings and the steps' uniform draws are copied into the
graph's buffers before its replays. These loops do not wait for their tokens: they return a `Pending`, whose ids
come back to pinned host memory behind the replays; `Pending.follow(n)` replays n more steps from where those end
(the graph's token and position buffers already hold the next step's), so a caller launches the next chunk before
it reads the last one and the GPU does not wait for the host between chunks.

Graphs are captured and launched through the CUDA driver API (`DriverGraph`), not torch.cuda.CUDAGraph:
from the 4th torch capture of a process on, every graph of the process (old ones too, and whatever
captured it) launches each kernel about 0.2 µs later, for good (session 19, bench/cuda_graph_inst.py);
captures by the driver API alone never do. Allocations made while capturing come from one torch memory
pool kept for the graphs (their buffers stay theirs between replays).
"""

from __future__ import annotations

import ctypes
import sys
import weakref
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch

from zinc.backends.base import Q8Cells
from zinc.backends.cuda.kernels import elementwise as kel
from zinc.backends.cuda.kernels import sample as ksample

MAX_GRAPHS = 8
MAX_SEEN = 256  # prompt-chunk keys remembered for the capture-on-repeat rule


class DriverGraph:
    """One step captured on a side stream and instantiated by libcuda (cuStreamBeginCapture in relaxed mode,
    so the allocator may take new memory while capturing); `replay` launches it on the current stream."""

    _cu = None

    @classmethod
    def driver(cls) -> ctypes.CDLL:
        if cls._cu is None:
            cu = ctypes.CDLL("nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1")
            vp, pvp = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)
            for name, args in (("cuStreamBeginCapture_v2", [vp, ctypes.c_int]), ("cuStreamEndCapture", [vp, pvp]),
                               ("cuGraphInstantiateWithFlags", [pvp, vp, ctypes.c_ulonglong]),
                               ("cuGraphLaunch", [vp, vp]), ("cuGraphExecDestroy", [vp]), ("cuGraphDestroy", [vp]),
                               ("cuGetErrorName", [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]),
                               ("cuFuncSetAttribute", [vp, ctypes.c_int, ctypes.c_int])):
                getattr(cu, name).argtypes = args
            cls._cu = cu
        return cls._cu

    @classmethod
    def check(cls, rc: int, what: str) -> None:
        if rc:
            name = ctypes.c_char_p()
            cls.driver().cuGetErrorName(rc, ctypes.byref(name))
            raise RuntimeError(f"CUDA driver: {what} failed ({(name.value or b'?').decode()})")

    def __init__(self) -> None:
        self.exec = ctypes.c_void_p()

    @contextmanager
    def capture(self, stream: torch.cuda.Stream, pool: Any):
        """Inside: the work queued on `stream` (made current) is captured, allocations come from `pool`; on
        leaving, the graph is instantiated (an error inside, or a capture the driver invalidated, raises)."""
        cu = self.driver()
        torch.cuda.synchronize()
        raw = ctypes.c_void_p(stream.cuda_stream)
        with torch.cuda.stream(stream), torch.cuda.use_mem_pool(pool):
            self.check(cu.cuStreamBeginCapture_v2(raw, 2), "cuStreamBeginCapture")  # 2: relaxed
            graph = ctypes.c_void_p()
            try:
                try:
                    yield
                finally:  # (the stream leaves capture mode whatever happened inside)
                    rc = cu.cuStreamEndCapture(raw, ctypes.byref(graph))
                self.check(rc, "cuStreamEndCapture")
                self.check(cu.cuGraphInstantiateWithFlags(ctypes.byref(self.exec), graph, 0), "cuGraphInstantiate")
            finally:
                if graph:
                    cu.cuGraphDestroy(graph)

    def replay(self) -> None:
        self.check(self.driver().cuGraphLaunch(self.exec, torch.cuda.current_stream().cuda_stream),
                   "cuGraphLaunch")

    def __del__(self) -> None:
        if self.exec and self._cu is not None:
            self._cu.cuGraphExecDestroy(self.exec)


@dataclass
class _Captured:
    graph: DriverGraph
    tokens: torch.Tensor
    pos: torch.Tensor
    out: torch.Tensor
    signature: tuple
    owner: Any  # weakref.ref to the cache it replays on
    chosen: torch.Tensor | None = None  # greedy graphs: the ids chosen so far (cache.n_ctx,) int32
    count: torch.Tensor | None = None  # greedy graphs: how many of them (1,) int64
    tables: torch.Tensor | None = None  # group steps: the captured group's tables (`CudaOps.kv_tables`)
    sampling: "SampleBufs | None" = None  # sampled graphs: the rows' settings and the steps' draws


class SampleBufs:
    """A sampled graph's inputs besides tokens and positions (`kernels/sample.py`): each row's settings and the
    steps' uniform draws (up to `steps`), and how many of a row's best logits it draws from."""

    def __init__(self, rows: int, steps: int, top: int, full: bool, device: Any) -> None:
        self.fp = torch.zeros((rows, 3), dtype=torch.float64, device=device)
        self.ip = torch.ones((rows, 2), dtype=torch.int32, device=device)
        self.u = torch.zeros((steps, rows), dtype=torch.float64, device=device)
        self.top, self.full = top, full  # (full: rows may draw from the whole row)
        self.first: torch.Tensor | None = None  # the eager step's ids (1, rows), drawn before the capture

    def set(self, params: Any, uniforms: Any) -> None:
        """params (rows, 5): temperature, top_k, top_p, min_p, need; uniforms (n, rows) float64."""
        fp, ip = ksample.rows_params(params, "cpu")
        self.fp.copy_(fp.pin_memory(), non_blocking=True)
        self.ip.copy_(ip.pin_memory(), non_blocking=True)
        self.put_uniforms(uniforms)

    def put_uniforms(self, uniforms: Any) -> None:
        """uniforms (n, rows) float64 into the first n rows of `u`, behind the work already queued (from pinned
        memory: a pageable source would hold the host until the stream drains, and the chunk launched ahead with it)."""
        self.u[:len(uniforms)].copy_(torch.from_numpy(uniforms).pin_memory(), non_blocking=True)

    def tail(self, out: torch.Tensor, tokens, pos, chosen, count) -> None:
        ksample.sample_next(out, self.top, self.fp, self.ip, self.u, tokens, pos, chosen, count, full=self.full)


class Pending:
    """Steps of a device loop, launched: their ids (steps, rows) on their way to pinned host memory. `ids()` waits for
    them; `follow(n, uniforms)` launches n more steps of the same loop from where these end (uniforms: a sampled
    loop's draws for them), valid while nothing else has run on the loop's caches since; None without a graph."""

    def __init__(self, g: "_Captured | None", ids: torch.Tensor) -> None:
        self.g, self.n = g, int(ids.shape[0])
        self.host = torch.empty(tuple(ids.shape), dtype=ids.dtype, pin_memory=True)
        self.host.copy_(ids, non_blocking=True)
        self.event = torch.cuda.Event()
        self.event.record()

    def ids(self) -> Any:
        self.event.synchronize()
        return self.host.numpy()

    def follow(self, n: int, uniforms: Any = None) -> "Pending | None":
        g = self.g
        if g is None or n <= 0:
            return None
        if uniforms is not None:
            g.sampling.put_uniforms(uniforms)
        return _replay(g, n)


def _replay(g: "_Captured", n: int, done: int = 0) -> Pending:
    """The rest of a device loop of n steps as replays of g (`done` of them already in `chosen`, counted; none: the
    count starts again): their ids, pending."""
    if not done:
        g.count.zero_()
    for _ in range(n - done):
        g.graph.replay()
    return Pending(g, g.chosen[:n].reshape(n, -1))


def fits(g: "_Captured", cache: Any) -> bool:
    """Whether `g` (captured under this cache's id) can replay on `cache`: the same object, or one whose tensors
    sit where the captured one's did (it then becomes the owner)."""
    if g.owner() is cache:
        return True
    if g.signature != cache_signature(cache):
        return False
    g.owner = weakref.ref(cache)
    return True


def cache_signature(cache: Any) -> tuple:
    """The device addresses (and shapes) of what a captured step reads or writes in `cache`: a new cache can
    reuse a freed one's Python id and, of another size, its memory."""
    sig = []
    for layer in cache.layers:
        if layer is None:
            continue
        for name in ("k", "v", "pos", "conv", "ssm"):
            t = getattr(layer, name, None)
            for part in (t.q, t.d) if isinstance(t, Q8Cells) else (t,):
                if isinstance(part, torch.Tensor):
                    sig.append((part.data_ptr(), tuple(part.shape)))
    return tuple(sig)


def group_signature(group: Any) -> tuple:
    """`cache_signature` of each cache of a `CacheGroup`, in row order."""
    return tuple(cache_signature(c) for c in group.caches)


class StepGraphs:
    """An LRU of captured steps (decode steps, prompt chunks) of one `CudaOps`."""

    def __init__(self, ops: Any) -> None:
        self.ops = ops
        self.pool = torch.cuda.MemPool()  # what captured steps allocate (their buffers between replays)
        self.stream = torch.cuda.Stream(ops.device)  # captures run on it
        self.graphs: "OrderedDict[tuple, _Captured]" = OrderedDict()
        self.captures = 0
        self.uncapturable: set[tuple] = set()  # (model, prefill?) whose step failed to capture: eager
        self.seen: set[tuple] = set()  # prompt-chunk keys run once (captured when they come again)

    @staticmethod
    def _kind(forward, cfg, weights, batch) -> tuple:
        """What a failed capture marks eager: a model's decode steps, prompt chunks or group steps."""
        return (id(forward), id(cfg), id(weights), "seqs" if batch.seqs else batch.n > 1)

    def capturable(self, forward, cfg, weights, batch) -> bool:
        return self._kind(forward, cfg, weights, batch) not in self.uncapturable

    def run_seqs(self, forward, cfg, weights, batch, group) -> torch.Tensor:
        """A step of several sequences (see the module docstring); eager unless each has one row."""
        if any(n != 1 for n in batch.seqs):
            return forward(self.ops, cfg, weights, batch, group)
        key = self._group_key(forward, cfg, weights, batch, group, "seqs")
        g = self._group_graph(key, batch, group)
        if g is not None:
            g.graph.replay()
            return g.out
        if key not in self.seen:  # a new number of sequences: eager, captured when it comes again
            self._see(key)
            return forward(self.ops, cfg, weights, batch, group)
        return self._capture_group(key, forward, cfg, weights, batch, group)[0]

    @staticmethod
    def _group_key(forward, cfg, weights, batch, group, kind: str) -> tuple:
        # (the largest cache sets the attention's splits: `CudaOps.rope_qk_attention_seqs`)
        return (id(forward), id(cfg), id(weights), kind, batch.n, bool(batch.last_only),
                max(c.n_ctx for c in group.caches))

    def _group_graph(self, key: tuple, batch, group) -> "_Captured | None":
        """The group step captured under key, its tokens, positions and tables set to this step's, if it can
        replay on this group's caches."""
        g = self.graphs.get(key)
        if (g is None or (g.tables is None) != (group.tables is None)
                or (g.signature and g.signature != group_signature(group))):
            return None
        self.graphs.move_to_end(key)
        g.tokens.copy_(batch.tokens.reshape(g.tokens.shape), non_blocking=True)
        g.pos.copy_(batch.pos.reshape(g.pos.shape), non_blocking=True)
        if g.tables is not None:
            g.tables.copy_(group.tables, non_blocking=True)
        return g

    def _capture_group(self, key: tuple, forward, cfg, weights, batch, group, greedy: bool = False,
                       sampling: "SampleBufs | None" = None):
        """`_capture` of a group step (kept under key when it captured): (its eager result, _Captured or None)."""
        if group.tables is not None:  # the captured step reads these; later groups' tables are copied in
            group.tables = group.tables.clone()
        group.addressed = False
        out, g = self._capture(forward, cfg, weights, batch, group, greedy=greedy, sampling=sampling)
        if g is not None:
            g.signature = group_signature(group) if group.addressed else ()
            g.tables = group.tables
            self._keep(key, g)
        return out, g

    def run(self, forward, cfg, weights, batch, cache) -> torch.Tensor:
        if batch.seqs:
            return self.run_seqs(forward, cfg, weights, batch, cache)
        key = (id(forward), id(cfg), id(weights), id(cache), batch.n, bool(batch.last_only))
        g = self._single_graph(key, batch, cache)
        if g is not None:
            g.graph.replay()
            return g.out
        if batch.n > 1 and key not in self.seen:  # a new prompt-chunk length: eager, captured on a repeat
            self._see(key)
            return forward(self.ops, cfg, weights, batch, cache)
        out, g = self._capture(forward, cfg, weights, batch, cache)
        if g is not None:
            self._keep(key, g)
        return out

    def _single_graph(self, key: tuple, batch, cache) -> "_Captured | None":
        """The step of one sequence captured under key, its token and position set to this step's, if it can
        replay on this cache (`fits`); `_group_graph`'s twin."""
        g = self.graphs.get(key)
        if g is None or not fits(g, cache):
            return None
        self.graphs.move_to_end(key)
        g.tokens.copy_(batch.tokens.reshape(g.tokens.shape), non_blocking=True)
        g.pos.copy_(batch.pos.reshape(g.pos.shape), non_blocking=True)
        return g

    def _see(self, key: tuple) -> None:
        if len(self.seen) >= MAX_SEEN:
            self.seen.clear()
        self.seen.add(key)

    def _keep(self, key: tuple, g: _Captured) -> None:
        self.graphs[key] = g
        while len(self.graphs) > MAX_GRAPHS:
            self.graphs.popitem(last=False)

    def greedy(self, forward, cfg, weights, batch, cache, n: int) -> Pending:
        """n greedy steps from the one-token batch without the host in the loop: a graph of the step
        followed by its argmax, which becomes the next step's token (position + 1) and is appended
        to `chosen`. The first step runs eagerly when the graph is (re)captured. The ids (steps, 1) of
        the steps run: all n, or only that first one when the capture failed."""
        key = (id(forward), id(cfg), id(weights), id(cache), "greedy")
        g = self._single_graph(key, batch, cache)
        if g is not None:
            return self._greedy_replays(g, n)
        out, g = self._capture(forward, cfg, weights, batch, cache, greedy=True)
        first = torch.argmax(out[-1]).to(torch.int32)
        if g is None:
            return Pending(None, first.reshape(1, 1))
        self._keep(key, g)
        return self._greedy_replays(g, n, first, batch.pos)

    @staticmethod
    def _greedy_replays(g: "_Captured", n: int, first: torch.Tensor | None = None,
                        pos: torch.Tensor | None = None) -> Pending:
        """The rest of n greedy steps as replays of g, its inputs set: after the eager first step of a capture,
        its ids `first` (the next tokens, appended) at positions `pos` + 1; the ids of the n steps."""
        if first is None:
            return _replay(g, n)
        g.chosen[:1] = first
        g.tokens.copy_(first.reshape(g.tokens.shape))
        g.pos.copy_(pos.reshape(g.pos.shape) + 1)
        g.count.fill_(1)
        return _replay(g, n, 1)

    def greedy_seqs(self, forward, cfg, weights, batch, group, n: int) -> Pending:
        """`greedy` for a group of sequences one token each: n steps, each row's argmax its sequence's next token;
        (steps run, sequences) ids: all n, or only the first (eager) step when the capture failed."""
        key = self._group_key(forward, cfg, weights, batch, group, "greedy")
        g = self._group_graph(key, batch, group)
        if g is not None:
            return self._greedy_replays(g, n)
        out, g = self._capture_group(key, forward, cfg, weights, batch, group, greedy=True)
        first = torch.argmax(out, dim=-1).to(torch.int32)
        if g is None:
            return Pending(None, first.reshape(1, -1))
        return self._greedy_replays(g, n, first, batch.pos)

    def sample(self, forward, cfg, weights, batch, cache, n: int, params: Any, uniforms: Any, top: int) -> Pending:
        """n steps of one sequence or a group (one token each), each row's token drawn on the device by its
        settings (params (rows, 5), see `SampleBufs.set`) with uniforms[s, row] the s-th step's draw, fed to the next
        step like `greedy`'s; (steps run, rows) ids: all n, or only the first (eager) one when the capture failed."""
        seqs, full = bool(batch.seqs), ksample.needs_full(params)
        kind = f"sample{top}{'full' if full else ''}"
        if seqs:
            key = self._group_key(forward, cfg, weights, batch, cache, kind)
            g = self._group_graph(key, batch, cache)
        else:
            key = (id(forward), id(cfg), id(weights), id(cache), kind)
            g = self._single_graph(key, batch, cache)
        if g is not None:
            g.sampling.set(params, uniforms)
            return _replay(g, n)
        rows = len(batch.seqs) if seqs else 1
        bufs = SampleBufs(rows, max(c.n_ctx for c in cache.caches) if seqs else cache.n_ctx, top, full,
                          self.ops.device)
        bufs.set(params, uniforms)
        if seqs:
            out, g = self._capture_group(key, forward, cfg, weights, batch, cache, sampling=bufs)
        else:
            out, g = self._capture(forward, cfg, weights, batch, cache, sampling=bufs)
            if g is not None:
                self._keep(key, g)
        if g is None:  # the eager step's token alone
            return Pending(None, bufs.first)
        g.count.zero_()
        bufs.tail(out, g.tokens, g.pos, g.chosen, g.count)  # the eager step's token: the next replay's input
        return _replay(g, n, 1)

    @contextmanager
    def _capture_paths(self):
        """The ops take the paths a capture needs (no host syncs) while inside."""
        self.ops.capturing = True
        try:
            yield
        finally:
            self.ops.capturing = False

    def _capture(self, forward, cfg, weights, batch, cache, greedy: bool = False,
                 sampling: "SampleBufs | None" = None) -> tuple[torch.Tensor, Any]:
        """Run the step eagerly (its result is returned), then capture it (followed by the greedy or sampled
        choice of the next token, with `greedy` or `sampling`): (result, _Captured), or
        (result, None) when the capture fails (an op of the step cannot be captured): the model is
        then marked to run eagerly from now on, with a note on stderr."""
        from dataclasses import replace

        tokens, pos = batch.tokens.clone(), batch.pos.clone()
        static = replace(batch, tokens=tokens, pos=pos)
        # the eager run takes the capture's paths too: every kernel specialization the capture launches is then
        # compiled and loaded (a first load inside a capture fails it)
        with self._capture_paths():
            eager = forward(self.ops, cfg, weights, static, cache).clone()
            if sampling is not None:  # the eager step's ids (and the tail's kernels loaded outside the capture)
                sampling.first = torch.zeros((1, tokens.numel()), dtype=torch.int32, device=self.ops.device)
                sampling.tail(eager, tokens.clone(), pos.clone(), sampling.first,
                              torch.zeros((1,), dtype=torch.int64, device=self.ops.device))
            elif greedy and not batch.seqs:  # the argmax kernel loaded outside the capture, on scratch inputs
                kel.greedy_next(eager[-1].float().contiguous(), tokens.clone(), pos.clone(),
                                torch.zeros((1,), dtype=torch.int32, device=self.ops.device),
                                torch.zeros((1,), dtype=torch.int64, device=self.ops.device))
        torch.cuda.synchronize(self.ops.device)
        chosen = count = None
        if greedy or sampling is not None:  # (a group: a row of ids a step)
            chosen = torch.zeros((max(c.n_ctx for c in cache.caches), batch.n) if batch.seqs else (cache.n_ctx,),
                                 dtype=torch.int32, device=self.ops.device)
            count = torch.zeros((1,), dtype=torch.int64, device=self.ops.device)
        graph = DriverGraph()
        try:
            with self._capture_paths(), graph.capture(self.stream, self.pool):
                out = forward(self.ops, cfg, weights, static, cache)
                if sampling is not None:
                    sampling.tail(out, tokens, pos, chosen, count)
                elif greedy and batch.seqs:  # each row's id: its sequence's next token, position + 1, a row appended
                    ids = torch.argmax(out, dim=-1).to(torch.int32)
                    tokens.copy_(ids)
                    pos.add_(1)
                    chosen.index_copy_(0, count, ids[None])
                    count.add_(1)
                elif greedy:  # the chosen id feeds the next replay: token, position + 1, appended
                    kel.greedy_next(out[-1].float().contiguous(), tokens, pos, chosen, count)
        except RuntimeError as e:  # torch.AcceleratorError is one
            self.uncapturable.add(self._kind(forward, cfg, weights, batch))
            kind = "decode step of several sequences" if batch.seqs else "prompt chunk" if batch.n > 1 else "decode step"
            print(f"zinc: cuda: the {kind} could not be captured as a graph ({str(e).splitlines()[0]}); "
                  "running it without graphs", file=sys.stderr)
            return eager, None
        self.captures += 1
        sig = () if batch.seqs else cache_signature(cache)  # (a group's: run_seqs)
        return eager, _Captured(graph, tokens, pos, out, sig, weakref.ref(cache), chosen, count, sampling=sampling)
