"""The one module that talks to wgpu: adapter choice, device, buffers, pipeline cache, command recording.

Adapter policy: prefer a discrete GPU, then an integrated one; a CPU adapter (Mesa's lavapipe,
llvmpipe) is never taken silently — only with `allow_cpu_adapter=True`, which the tests pass.

Recording: `dispatch` appends a compute pass to one pending command encoder; nothing reaches the
queue until `flush` (called by `read`), so a whole step is one command buffer and one submit.
Buffers are never rewritten by `queue.write_buffer` while a step is being recorded (that would
reorder the write before earlier recorded reads): new data always goes into a new buffer. Every
buffer a pending pass binds is kept alive until the flush.

WGSL has no preprocessor; shader files use `{{NAME}}` placeholders that `pipeline()` fills from its
`subs` argument, and each distinct (file, entry, subs) is compiled once.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from zinc.errors import BackendUnavailableError

SHADER_DIR = Path(__file__).parent / "shaders"
MAX_GROUPS = 65535  # per grid dimension
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


def grid(n: int) -> tuple[int, int, int]:
    """A 2-D workgroup grid covering `n` groups (kernels flatten it as x + y * nx)."""
    n = max(1, int(n))
    if n <= MAX_GROUPS:
        return (n, 1, 1)
    return (MAX_GROUPS, -(-n // MAX_GROUPS), 1)


class Device:
    """A wgpu device plus its pipeline cache and the pending command encoder of the current step."""

    def __init__(self, allow_cpu_adapter: bool = False) -> None:
        self.wgpu = wgpu = _import_wgpu()
        self.adapter = select_adapter(wgpu, allow_cpu_adapter)
        lim = self.adapter.limits
        wanted = {k: lim[k] for k in ("max-storage-buffer-binding-size", "max-buffer-size",
                                      "max-storage-buffers-per-shader-stage", "max-compute-workgroup-storage-size")
                  if k in lim}
        self.device = self.adapter.request_device_sync(required_limits=wanted)
        self.max_binding = int(lim.get("max-storage-buffer-binding-size", 128 << 20))
        self.info = dict(self.adapter.info)
        self._modules: dict[str, Any] = {}
        self._pipelines: dict[tuple, Any] = {}
        self._encoder: Any = None
        self._keep: list[Any] = []
        self.n_dispatches = 0
        self.n_submits = 0

    # -- buffers ------------------------------------------------------------------------------------
    def buffer(self, nbytes: int) -> Any:
        """A zero-filled storage buffer (size rounded up to 4 bytes)."""
        u = self.wgpu.BufferUsage
        return self.device.create_buffer(size=max(4, (int(nbytes) + 3) & ~3),
                                         usage=u.STORAGE | u.COPY_SRC | u.COPY_DST)

    def buffer_from(self, data: np.ndarray | bytes) -> Any:
        """A storage buffer holding `data` (padded with zeros to a multiple of 4 bytes)."""
        raw = data.tobytes() if isinstance(data, np.ndarray) else bytes(data)
        raw += b"\0" * (-len(raw) % 4)
        if len(raw) > self.max_binding:
            raise BackendUnavailableError(f"a {len(raw)}-byte buffer exceeds the adapter's storage "
                                          f"binding limit of {self.max_binding} bytes")
        u = self.wgpu.BufferUsage
        return self.device.create_buffer_with_data(data=raw or b"\0\0\0\0",
                                                   usage=u.STORAGE | u.COPY_SRC | u.COPY_DST)

    def uniform(self, fmt: str, *values: Any) -> Any:
        """A uniform buffer packed with `struct` format `fmt` (u32 = 'I', i32 = 'i', f32 = 'f')."""
        raw = struct.pack("<" + fmt, *values)
        raw += b"\0" * (-len(raw) % 16)
        return self.device.create_buffer_with_data(data=raw, usage=self.wgpu.BufferUsage.UNIFORM)

    def copy(self, src: Any, src_off: int, dst: Any, dst_off: int, nbytes: int) -> None:
        """Record a buffer-to-buffer copy (offsets and size multiples of 4) into the pending encoder."""
        if nbytes:
            self._enc().copy_buffer_to_buffer(src, src_off, dst, dst_off, nbytes)
            self._keep += [src, dst]

    def read(self, buf: Any, nbytes: int) -> bytes:
        """Flush the pending step and read `nbytes` of `buf` back to the host."""
        self.flush()
        return bytes(self.device.queue.read_buffer(buf, 0, (int(nbytes) + 3) & ~3)[:nbytes])

    # -- pipelines and dispatches -------------------------------------------------------------------------
    def pipeline(self, shader: str, entry: str = "main", subs: dict[str, str] | None = None) -> Any:
        key = (shader, entry, tuple(sorted((subs or {}).items())))
        p = self._pipelines.get(key)
        if p is None:
            src = (SHADER_DIR / f"{shader}.wgsl").read_text()
            for name, val in (subs or {}).items():
                src = src.replace("{{" + name + "}}", val)
            if "{{" in src:
                raise ValueError(f"shader {shader}.wgsl has unfilled placeholders")
            module = self.device.create_shader_module(code=src, label=shader)
            p = self.device.create_compute_pipeline(layout="auto", compute={"module": module, "entry_point": entry},
                                                    label=f"{shader}:{entry}")
            self._pipelines[key] = p
        return p

    def dispatch(self, pipeline: Any, buffers: Sequence[Any], groups: tuple[int, int, int]) -> None:
        """Record one compute pass: binding i of group 0 is buffers[i] (uniform or storage)."""
        entries = [{"binding": i, "resource": {"buffer": b, "offset": 0, "size": b.size}}
                   for i, b in enumerate(buffers)]
        bg = self.device.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=entries)
        cp = self._enc().begin_compute_pass()
        cp.set_pipeline(pipeline)
        cp.set_bind_group(0, bg)
        cp.dispatch_workgroups(*groups)
        cp.end()
        self._keep += [bg, *buffers]
        self.n_dispatches += 1

    def _enc(self) -> Any:
        if self._encoder is None:
            self._encoder = self.device.create_command_encoder()
        return self._encoder

    def flush(self) -> None:
        """Submit the pending command encoder (one command buffer) if anything was recorded."""
        if self._encoder is not None:
            self.device.queue.submit([self._encoder.finish()])
            self._encoder = None
            self._keep = []
            self.n_submits += 1
