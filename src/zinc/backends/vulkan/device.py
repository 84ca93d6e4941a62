"""The one module that talks to wgpu: adapter choice, device, buffers, pipeline cache, command recording.

Adapter policy: prefer a discrete GPU, then an integrated one; a CPU adapter (Mesa's lavapipe,
llvmpipe) is never taken silently — only with `allow_cpu_adapter=True`, which the tests pass.

Recording: `dispatch` appends to one open compute pass of one pending command encoder (wgpu orders
the dispatches of a pass); nothing reaches the queue until `flush` (called by `read`), so a whole
step is one command buffer and one submit. Every buffer a pending dispatch binds is kept alive until
the flush.

Host cost per dispatch is what limits decode, so nothing is created twice when it can be reused:
- buffers come from a pool (`buffer`, `buffer_from(pooled=True)`): a pooled buffer that only the
  pool still references after a flush goes back to its size's free list, in allocation order, so
  identical steps get identical buffers; free buffers unused for `_KEEP_GENS` flushes are dropped.
  A pooled buffer is never one the pending encoder uses, so `queue.write_buffer` into a freshly
  taken one is ordered correctly (the write lands before the next submit, after earlier ones).
- uniforms are cached by content (they are immutable);
- bind groups are cached by (pipeline, buffers) and dropped when one of their buffers dies.

`start_recording` logs the dispatches, copies and pooled host writes of a step into a `Recording`
(replay.py) and `replay` issues them again (see there).

WGSL has no preprocessor; shader files use `{{NAME}}` placeholders that `pipeline()` fills from its
`subs` argument, and `// #include "lib/x.wgsl"` lines for code shared between shaders (expanded by
`shader_source`); each distinct (file, entry, subs) is compiled once.
"""

from __future__ import annotations

import re
import struct
import sys
import weakref
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from zinc.errors import BackendUnavailableError

SHADER_DIR = Path(__file__).parent / "shaders"
_INCLUDE = re.compile(r'^// #include "([\w/.]+)"$', re.MULTILINE)


@lru_cache(maxsize=None)
def shader_source(name: str) -> str:
    """The WGSL of `shaders/<name>` with each `// #include "lib/x.wgsl"` line replaced by that file."""
    return _INCLUDE.sub(lambda m: shader_source(m.group(1)), (SHADER_DIR / name).read_text())
MAX_GROUPS = 65535  # per grid dimension
_KEEP_GENS = 2  # flushes a free pooled buffer survives without being taken
_MAX_CACHED = 16384  # uniforms / bind groups kept before the cache is cleared
SUBMIT_EVERY = 96
SUBMIT_FIRST = 16
_OPTIONAL_FEATURES = ("subgroup", "timestamp-query", "timestamp-query-inside-passes")
_PREFERENCE = {"DiscreteGPU": 0, "IntegratedGPU": 1, "VirtualGPU": 2, "Unknown": 3, "CPU": 4}


def _import_wgpu() -> Any:
    try:
        import wgpu
    except ImportError as e:
        raise BackendUnavailableError(
            f"the vulkan backend needs wgpu (pip install 'zinc-llm[vulkan]'): {e}") from None
    return wgpu


def _adapter_type(adapter: Any) -> str:
    info = dict(adapter.info)
    return str(info.get("adapter_type", "Unknown"))


def select_adapter(wgpu: Any, allow_cpu_adapter: bool = False) -> Any:
    """The best Vulkan/Metal adapter: discrete first; a CPU adapter only when explicitly allowed."""
    adapters = [a for a in wgpu.gpu.enumerate_adapters_sync()
                if dict(a.info).get("backend_type") in ("Vulkan", "Metal", "D3D12")]
    if not adapters:
        raise BackendUnavailableError("wgpu found no Vulkan or Metal adapter "
                                      "(install a Vulkan driver, e.g. mesa-vulkan-drivers)")
    adapters.sort(key=lambda a: _PREFERENCE.get(_adapter_type(a), 3))
    best = adapters[0]
    if _adapter_type(best) == "CPU" and not allow_cpu_adapter:
        raise BackendUnavailableError(
            f"only a CPU Vulkan adapter is present ({dict(best.info).get('device')}); pass "
            "allow_cpu_adapter=True to use it (tests only: it is slower than the cpu backend)")
    return best


def _refcounts(items: list[Any]) -> list[int]:
    """Reference counts of `items`, as seen from here (the list's own reference included)."""
    return [sys.getrefcount(b) for b in items]


_ONLY_LISTED = _refcounts([object()])[0]  # the count of an object that only a list holds


def _raw_pass_functions() -> tuple | None:
    """wgpu-native's (set pipeline, set bind group, dispatch) C functions and NULL, for replays."""
    try:
        from wgpu.backends.wgpu_native._ffi import ffi, lib
        return (lib.wgpuComputePassEncoderSetPipeline, lib.wgpuComputePassEncoderSetBindGroup,
                lib.wgpuComputePassEncoderDispatchWorkgroups, ffi.NULL)
    except (ImportError, AttributeError):
        return None


def grid(n: int) -> tuple[int, int, int]:
    """A 2-D workgroup grid covering `n` groups (kernels flatten it as x + y * nx)."""
    n = max(1, int(n))
    if n <= MAX_GROUPS:
        return (n, 1, 1)
    return (MAX_GROUPS, -(-n // MAX_GROUPS), 1)


class Device:
    """A wgpu device plus its pipeline cache and the pending command encoder of the current step."""

    def __init__(self, allow_cpu_adapter: bool = False, subgroups: bool = True, submit_every: int = SUBMIT_EVERY,
                 raw: bool = True, submit_first: int = SUBMIT_FIRST, binding_limit: int | None = None) -> None:
        """subgroups: use subgroup shuffles where the adapter has them; submit_every, submit_first: see
        below; raw: replays call wgpu-native's C functions directly (else through wgpu's Python wrappers);
        binding_limit: bytes one storage binding may hold, below the adapter's (tests of split weights)."""
        self.wgpu = wgpu = _import_wgpu()
        self.adapter = select_adapter(wgpu, allow_cpu_adapter)
        lim = self.adapter.limits
        wanted = {k: lim[k] for k in ("max-storage-buffer-binding-size", "max-buffer-size",
                                      "max-storage-buffers-per-shader-stage", "max-compute-workgroup-storage-size",
                                      "max-compute-invocations-per-workgroup", "max-compute-workgroup-size-x")
                  if k in lim}
        feats = set(self.adapter.features)
        self.features = sorted(f for f in _OPTIONAL_FEATURES if f in feats)
        self.device = self.adapter.request_device_sync(required_features=self.features, required_limits=wanted)
        self.subgroups = "subgroup" in self.features and subgroups
        info = dict(self.adapter.info)  # wgpu 0.32 spells the key "stackgroup_min_size"
        self.subgroup_min = int(info.get("subgroup_min_size") or info.get("stackgroup_min_size") or 0)
        if info.get("vendor_id") == 0x10DE:  # NVIDIA: always 32 (wgpu 0.32 reports 4..128 there)
            self.subgroup_min = 32
        self.max_binding = int(lim.get("max-storage-buffer-binding-size", 128 << 20))
        if binding_limit is not None:
            self.max_binding = min(self.max_binding, int(binding_limit))
        self.info = dict(self.adapter.info)
        self._modules: dict[str, Any] = {}
        self._pipelines: dict[tuple, Any] = {}
        self._encoder: Any = None
        self._pass: Any = None
        self._keep: list[Any] = []
        self._live: list[Any] = []  # pooled buffers handed out
        self._free: dict[int, list[tuple[int, Any]]] = {}  # size -> [(generation, buffer)], next last
        self._gen = 0
        self._reclaim_due = False
        self._uniforms: dict[bytes, Any] = {}
        self._staging: dict[int, Any] = {}  # size -> MAP_READ buffer
        self._step_memo: dict[tuple, tuple[tuple, Any]] = {}
        self._groups: dict[tuple, tuple[Any, tuple]] = {}
        self.n_buffers_created = 0
        self.n_bind_groups_created = 0
        self.n_dispatches = 0
        self.n_submits = 0
        self._prof: dict[str, Any] | None = None  # see start_profile
        # submit the pending commands every this many dispatches (0: only at flush), so the GPU runs
        # the start of a step while Python still records the rest of it; the first submit of a step
        # comes after submit_first dispatches (the GPU waits for it, then runs ahead of the host)
        self.submit_every = int(submit_every)
        self.submit_first = int(submit_first) if submit_first > 0 else self.submit_every
        self._n_pending = 0
        self._next_submit = self.submit_first  # dispatches pending at the next submit of this step
        self._rec: Any = None  # the Recording (replay.py) of the step being recorded
        self._raw = _raw_pass_functions() if raw else None

    # -- buffers ------------------------------------------------------------------------------------
    def _create(self, size: int) -> Any:
        u = self.wgpu.BufferUsage
        self.n_buffers_created += 1
        return self.device.create_buffer(size=size, usage=u.STORAGE | u.COPY_SRC | u.COPY_DST)

    def buffer(self, nbytes: int) -> Any:
        """A pooled storage buffer of `nbytes` (rounded up to 4); its contents are undefined."""
        size = max(4, (int(nbytes) + 3) & ~3)
        if self._reclaim_due:
            self._reclaim()
        free = self._free.get(size)
        b = free.pop()[1] if free else self._create(size)
        self._live.append(b)
        return b

    def _reclaim(self) -> None:
        """Return pooled buffers nobody else holds to the free lists (run first thing after a flush)."""
        self._reclaim_due = False
        self._gen += 1
        live, back = [], {}
        for b, refs in zip(self._live, _refcounts(self._live)):
            if refs <= _ONLY_LISTED:
                back.setdefault(b.size, []).append((self._gen, b))
            else:
                live.append(b)
        self._live = live
        old = self._gen - _KEEP_GENS
        for size in set(self._free) | set(back):
            kept = [e for e in self._free.get(size, ()) if e[0] > old]
            fresh = back.get(size, [])
            fresh.reverse()  # popped from the end: the next step takes them in allocation order
            merged = kept + fresh
            if merged:
                self._free[size] = merged
            else:
                self._free.pop(size, None)

    def buffer_from(self, data: np.ndarray | bytes, pooled: bool = False) -> Any:
        """A storage buffer holding `data` (padded with zeros to a multiple of 4 bytes); pooled ones
        for step data (written with `queue.write_buffer`), unpooled for weights."""
        raw = data.tobytes() if isinstance(data, np.ndarray) else bytes(data)
        raw += b"\0" * (-len(raw) % 4)
        if len(raw) > self.max_binding:
            raise BackendUnavailableError(f"a {len(raw)}-byte buffer exceeds the adapter's storage "
                                          f"binding limit of {self.max_binding} bytes")
        if pooled and raw:
            b = self.buffer(len(raw))
            self.device.queue.write_buffer(b, 0, raw)
            if self._rec is not None:
                self._rec.writes[id(b)] = b
            return b
        u = self.wgpu.BufferUsage
        self.n_buffers_created += 1
        return self.device.create_buffer_with_data(data=raw or b"\0\0\0\0",
                                                   usage=u.STORAGE | u.COPY_SRC | u.COPY_DST)

    def step_words(self, *values: int) -> Any:
        """A pooled storage buffer holding the u32 `values`, shared by the dispatches of this step: values
        that change every step (a KV length) go here, so uniforms and bind groups stay the same."""
        return self.step_memo(("words", *values), (),
                              lambda: self.buffer_from(np.array(values, np.uint32), pooled=True))

    def step_memo(self, key: tuple, owners: tuple, make: Any) -> Any:
        """`make()`, computed once per step for `key`; `owners` are the objects whose ids the key holds
        (a hit needs the same objects). Forgotten at the flush."""
        hit = self._step_memo.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], owners)):
            return hit[1]
        value = make()
        self._step_memo[key] = (owners, value)
        return value

    def uniform(self, fmt: str, *values: Any) -> Any:
        """A uniform buffer packed with `struct` format `fmt` (u32 = 'I', i32 = 'i', f32 = 'f'); cached
        by content."""
        raw = struct.pack("<" + fmt, *values)
        raw += b"\0" * (-len(raw) % 16)
        u = self._uniforms.get(raw)
        if u is None:
            if len(self._uniforms) >= _MAX_CACHED:
                self._uniforms.clear()
            u = self._uniforms[raw] = self.device.create_buffer_with_data(data=raw, usage=self.wgpu.BufferUsage.UNIFORM)
            self.n_buffers_created += 1
        return u

    def copy(self, src: Any, src_off: int, dst: Any, dst_off: int, nbytes: int) -> None:
        """Record a buffer-to-buffer copy (offsets and size multiples of 4) into the pending encoder."""
        if nbytes:
            self._end_pass()
            self._enc().copy_buffer_to_buffer(src, src_off, dst, dst_off, nbytes)
            self._keep += [src, dst]
            if self._rec is not None:
                self._rec.cmds.append((None, src, src_off, dst, dst_off, nbytes))
                self._rec.keep += [src, dst]

    def clear(self, buf: Any) -> None:
        """Record zeroing `buf` into the pending encoder (ordered with the commands around it)."""
        if self._rec is not None:
            self._rec.refuse("the step clears a buffer")
        self._end_pass()
        self._enc().clear_buffer(buf)
        self._keep.append(buf)

    def read(self, buf: Any, nbytes: int) -> bytes:
        """Flush the pending step and read `nbytes` of `buf` back to the host: the copy into a kept
        mappable staging buffer rides in the step's own command buffer (one submit, no new buffer)."""
        n = max(4, (int(nbytes) + 3) & ~3)
        if self._rec is not None:
            self._rec.refuse("the step reads a buffer back to the host")
        staging = self._staging.get(n)
        if staging is None:
            if len(self._staging) >= 4:
                self._staging.clear()
            u = self.wgpu.BufferUsage
            staging = self._staging[n] = self.device.create_buffer(size=n, usage=u.MAP_READ | u.COPY_DST)
        self._end_pass()
        self._enc().copy_buffer_to_buffer(buf, 0, staging, 0, n)
        self._keep.append(buf)
        self.flush()
        staging.map_sync(self.wgpu.MapMode.READ, 0, n)
        try:
            return bytes(staging.read_mapped(0, n, copy=False)[:nbytes])
        finally:
            staging.unmap()

    # -- pipelines and dispatches -------------------------------------------------------------------------
    def pipeline(self, shader: str, entry: str = "main", subs: dict[str, str] | None = None) -> Any:
        key = (shader, entry, tuple(sorted((subs or {}).items())))
        p = self._pipelines.get(key)
        if p is None:
            src = shader_source(f"{shader}.wgsl")
            for name, val in (subs or {}).items():
                src = src.replace("{{" + name + "}}", val)
            if "{{" in src:
                raise ValueError(f"shader {shader}.wgsl has unfilled placeholders")
            module = self.device.create_shader_module(code=src, label=shader)
            tag = "".join(f"/{v[3:].split()[0].rstrip(':')}" for k, v in sorted((subs or {}).items())
                          if k.startswith(("DEQUANT", "UNIT")) and v.startswith("// "))
            p = self.device.create_compute_pipeline(layout="auto", compute={"module": module, "entry_point": entry},
                                                    label=f"{shader}{tag}:{entry}")
            self._pipelines[key] = p
        return p

    def dispatch(self, pipeline: Any, buffers: Sequence[Any], groups: tuple[int, int, int]) -> None:
        """Record one dispatch: binding i of group 0 is buffers[i] (uniform or storage)."""
        bg = self._bind_group(pipeline, buffers)
        self._keep.append(buffers)
        if self._rec is not None:
            self._rec.cmds.append((pipeline, bg, groups))
            self._rec.keep.append(buffers)
        self._dispatch(pipeline, bg, groups)

    def _dispatch(self, pipeline: Any, bg: Any, groups: tuple[int, int, int]) -> None:
        cp = self._pass
        if cp is None:
            cp = self._pass = self._enc().begin_compute_pass()
            if self._prof is not None:
                self._stamp(cp, None)
        cp.set_pipeline(pipeline)
        cp.set_bind_group(0, bg)
        cp.dispatch_workgroups(*groups)
        if self._prof is not None:
            self._stamp(cp, f"{pipeline.label} {groups[0] * groups[1] * groups[2]}")
        self.n_dispatches += 1
        self._n_pending += 1
        if self._n_pending >= self._next_submit and self.submit_every > 0 and self._prof is None:
            self._submit()

    # -- recorded steps (replay.py) ------------------------------------------------------------------------
    def start_recording(self, rec: Any) -> None:
        """Log every dispatch, copy and pooled host write into `rec` until `stop_recording`."""
        self._rec = rec

    def stop_recording(self) -> None:
        self._rec = None

    def replay(self, rec: Any, writes: list[tuple[Any, np.ndarray]]) -> None:
        """Write the step inputs `writes` ((buffer, data) pairs), then re-issue `rec`'s commands.

        Without profiling, dispatches go straight to wgpu-native's C functions (the Python wrappers
        cost more than the calls): the commands were validated when the step was recorded."""
        if self._encoder is not None:  # earlier commands must not see this step's inputs
            self.flush()
        write = self.device.queue.write_buffer
        for buf, data in writes:
            write(buf, 0, data)
        raw = self._raw if self._prof is None else None
        if raw is None:
            for cmd in rec.cmds:
                if cmd[0] is None:
                    self._end_pass()
                    self._enc().copy_buffer_to_buffer(*cmd[1:])
                else:
                    self._dispatch(*cmd)
            return
        self._replay_raw(rec, raw)

    def _replay_raw(self, rec: Any, raw: tuple) -> None:
        """The commands of `rec` through wgpu-native's C functions on handles resolved once per recording;
        a pipeline already set stays set."""
        set_pipeline, set_group, dispatch, null = raw
        if rec.raw is None:
            rec.raw = [c if c[0] is None else (c[0]._internal, c[1]._internal, *c[2]) for c in rec.cmds]
        limit = self._next_submit if self.submit_every > 0 else 1 << 62
        n = self._n_pending
        h = last = None
        for cmd in rec.raw:
            if cmd[0] is None:
                self._end_pass()
                self._enc().copy_buffer_to_buffer(*cmd[1:])
                h = None
                continue
            if h is None:
                if self._pass is None:
                    self._pass = self._enc().begin_compute_pass()
                h, last = self._pass._internal, None
            if cmd[0] is not last:
                set_pipeline(h, cmd[0])
                last = cmd[0]
            set_group(h, 0, cmd[1], 0, null)
            dispatch(h, cmd[2], cmd[3], cmd[4])
            n += 1
            if n >= limit:
                self.n_dispatches += n - self._n_pending
                self._n_pending = n
                self._submit()
                limit, n, h = self._next_submit, 0, None
        self.n_dispatches += n - self._n_pending
        self._n_pending = n

    def _submit(self) -> None:
        """Submit what is recorded so far and keep recording the same step into a new encoder (step
        memos and the buffer pool are untouched: nothing here is reused before the step's flush)."""
        self._end_pass()
        self.device.queue.submit([self._encoder.finish()])
        self._encoder = None
        self._keep = []
        self._n_pending = 0
        self._next_submit = self.submit_every
        self.n_submits += 1

    def _bind_group(self, pipeline: Any, buffers: Sequence[Any]) -> Any:
        """The cached bind group of `buffers` for `pipeline`; an entry dies with any of its buffers."""
        key = (id(pipeline), *map(id, buffers))
        groups = self._groups
        hit = groups.get(key)
        if hit is not None and all(r() is b for r, b in zip(hit[1], buffers)):
            return hit[0]
        entries = [{"binding": i, "resource": {"buffer": b, "offset": 0, "size": b.size}}
                   for i, b in enumerate(buffers)]
        bg = self.device.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=entries)
        self.n_bind_groups_created += 1
        if len(groups) >= _MAX_CACHED:
            groups.clear()

        def drop(_ref: Any, key: tuple = key) -> None:
            groups.pop(key, None)
        groups[key] = (bg, tuple(weakref.ref(b, drop) for b in buffers))
        return bg

    # -- GPU timing (timestamp queries between dispatches; profiling only) --------------------------------
    def start_profile(self, capacity: int = 4096) -> None:
        """Time every dispatch on the GPU from now on (needs 'timestamp-query-inside-passes'): the time
        between the timestamps written before and after it goes to its shader's entry in `profile`.
        Every flush then waits for the GPU; this is for measuring, never for serving."""
        if "timestamp-query-inside-passes" not in self.features:
            raise RuntimeError("the adapter cannot write timestamps inside compute passes")
        self.flush()
        u = self.wgpu.BufferUsage
        self._prof = {"qs": self.device.create_query_set(type="timestamp", count=capacity), "cap": capacity,
                      "resolve": self.device.create_buffer(size=8 * capacity, usage=u.QUERY_RESOLVE | u.COPY_SRC),
                      "staging": self.device.create_buffer(size=8 * capacity, usage=u.MAP_READ | u.COPY_DST),
                      "labels": [], "ns": {}, "count": {}, "steps": 0}

    def stop_profile(self) -> dict[str, Any]:
        """{"steps": flushes timed, "ns": shader -> GPU ns, "count": shader -> dispatches}; stops timing."""
        self.flush()
        prof, self._prof = self._prof, None
        return {k: prof[k] for k in ("steps", "ns", "count")} if prof else {}

    def _stamp(self, cp: Any, label: str | None) -> None:
        from wgpu.backends.wgpu_native.extras import write_timestamp
        prof = self._prof
        if len(prof["labels"]) >= prof["cap"]:
            raise RuntimeError("profile: more timestamps in one step than the query set holds")
        write_timestamp(cp, prof["qs"], len(prof["labels"]))
        prof["labels"].append(label)

    def _collect(self, prof: dict[str, Any]) -> None:
        n = len(prof["labels"])
        prof["staging"].map_sync(self.wgpu.MapMode.READ, 0, 8 * n)
        t = np.frombuffer(prof["staging"].read_mapped(0, 8 * n), np.uint64).astype(np.int64)
        prof["staging"].unmap()
        for i in range(1, n):
            label = prof["labels"][i]
            if label is not None:
                name = label.split(":")[0] + " " + label.split()[-1]  # shader/types groups
                prof["ns"][name] = prof["ns"].get(name, 0) + int(t[i] - t[i - 1])
                prof["count"][name] = prof["count"].get(name, 0) + 1
        prof["labels"] = []
        prof["steps"] += 1

    def _enc(self) -> Any:
        if self._encoder is None:
            self._encoder = self.device.create_command_encoder()
        return self._encoder

    def _end_pass(self) -> None:
        if self._pass is not None:
            self._pass.end()
            self._pass = None

    def flush(self) -> None:
        """Submit the pending command encoder (one command buffer) if anything was recorded."""
        if self._encoder is not None:
            self._end_pass()
            prof = self._prof
            if prof is not None and prof["labels"]:
                n = len(prof["labels"])
                self._encoder.resolve_query_set(prof["qs"], 0, n, prof["resolve"], 0)
                self._encoder.copy_buffer_to_buffer(prof["resolve"], 0, prof["staging"], 0, 8 * n)
            self.device.queue.submit([self._encoder.finish()])
            self._encoder = None
            self._keep = []
            self._n_pending = 0
            self.n_submits += 1
            if prof is not None and prof["labels"]:
                self._collect(prof)
        self._step_memo = {}
        self._reclaim_due = True
        self._next_submit = self.submit_first
