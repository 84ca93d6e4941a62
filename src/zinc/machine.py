"""The machine zinc runs on: host facts (OS, Python, CPU, RAM) and every backend's availability.

`host_info()` and `probe_backends(host)` are what `zinc --check` reports; `probe_cuda()` and
`probe_vulkan()` import torch / wgpu lazily and never raise (the reason goes in the result).
`choose_backend(backends, "auto")` picks the best available implemented one.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import threading
from typing import Any

import numpy as np


def _meminfo() -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                key, _, rest = line.partition(":")
                parts = rest.split()
                if parts and parts[0].isdigit():
                    out[key] = int(parts[0]) * (1024 if parts[1:] == ["kB"] else 1)
    except OSError:
        pass
    return out


def _sysconf(name: str) -> int | None:
    try:
        value = os.sysconf(name)
        return value if value > 0 else None
    except (ValueError, OSError, AttributeError):
        return None


def cpu_name() -> str:
    """The CPU model name (from /proc/cpuinfo where there is one)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def host_info() -> dict[str, Any]:
    mi = _meminfo()
    page = _sysconf("SC_PAGE_SIZE") or 4096
    total = mi.get("MemTotal") or ((_sysconf("SC_PHYS_PAGES") or 0) * page) or None
    avail = mi.get("MemAvailable") or ((_sysconf("SC_AVPHYS_PAGES") or 0) * page) or None
    return {"os": platform.platform(), "python": f"{platform.python_version()} ({platform.python_implementation()})",
            "cpu": cpu_name(), "cores": os.cpu_count(), "ram_total": total, "ram_available": avail}


def _implemented_backends() -> set[str]:
    try:
        from zinc.backends import backend_names
        return set(backend_names())
    except Exception:  # noqa: BLE001 - a broken backend package must not break --check
        return {"cpu"}


def probe_cuda() -> dict[str, Any]:
    """torch importable and torch.cuda.is_available(); device names, memory and driver."""
    res: dict[str, Any] = {"name": "cuda", "available": False, "reason": "", "devices": []}
    try:
        import torch
    except ModuleNotFoundError:
        res["reason"] = "torch is not installed (pip install 'zinc-llm[cuda]')"
        return res
    except Exception as e:  # noqa: BLE001 - broken installs raise anything
        res["reason"] = f"torch failed to import: {e.__class__.__name__}: {e}"
        return res
    try:
        if not torch.cuda.is_available():
            why = "built without CUDA" if torch.version.cuda is None else "no NVIDIA GPU or driver is visible"
            res["reason"] = f"torch {torch.__version__} is installed but torch.cuda.is_available() is False ({why})"
            return res
        driver = getattr(torch._C, "_cuda_getDriverVersion", lambda: None)()
        drv = f"{driver // 1000}.{driver % 1000 // 10}" if driver else "unknown"
        for i in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(i)
            try:
                free, total = torch.cuda.mem_get_info(i)
            except Exception:  # noqa: BLE001
                free, total = None, props.total_memory
            res["devices"].append({"name": props.name, "memory": int(total), "memory_free": free,
                                   "driver": f"driver {drv}, CUDA runtime {torch.version.cuda}, torch {torch.__version__}"})
    except Exception as e:  # noqa: BLE001
        res["reason"] = f"CUDA probe failed: {e.__class__.__name__}: {e}"
        return res
    res["available"] = bool(res["devices"])
    if importlib.util.find_spec("triton") is None:
        res["note"] = "triton is not installed: zinc's CUDA kernels need it"
    return res


def _wgpu_adapter(out: dict[str, Any]) -> None:
    try:
        import wgpu
    except ModuleNotFoundError:
        out["reason"] = "wgpu is not installed (pip install 'zinc-llm[vulkan]')"
        return
    try:
        gpu = wgpu.gpu
        request = getattr(gpu, "request_adapter_sync", None) or gpu.request_adapter
        adapter = request(power_preference="high-performance")
        if adapter is None:
            out["reason"] = "wgpu found no GPU adapter (install a Vulkan driver, e.g. mesa-vulkan-drivers)"
            return
        info = getattr(adapter, "info", None)
        if info is None and hasattr(adapter, "request_adapter_info"):
            info = adapter.request_adapter_info()
        info = dict(info or {})
        name = info.get("device") or info.get("description") or "GPU adapter"
        driver = " ".join(str(info.get(k)) for k in ("backend_type", "adapter_type", "description") if info.get(k))
        feats = sorted(str(f) for f in getattr(adapter, "features", ()))
        lim = dict(getattr(adapter, "limits", {}) or {})
        shown = [f for f in feats if f.startswith(("subgroup", "timestamp-query", "shader-f16"))]
        driver += (f"; features: {', '.join(shown) or 'none of subgroup/timestamp-query/shader-f16'}"
                   f"; max storage binding {int(lim.get('max-storage-buffer-binding-size', 0)) >> 20} MiB, "
                   f"max workgroup {lim.get('max-compute-invocations-per-workgroup', '?')} invocations, "
                   f"{int(lim.get('max-compute-workgroup-storage-size', 0)) >> 10} KiB workgroup memory")
        out["devices"].append({"name": name, "memory": None, "memory_free": None, "features": feats,
                               "limits": {k: v for k, v in lim.items() if "compute" in k or "storage" in k},
                               "driver": f"{driver}, wgpu {getattr(wgpu, '__version__', '?')}".strip(", ")})
        if str(info.get("adapter_type", "")).lower() == "cpu":
            out["reason"] = (f"only a software (CPU) adapter was found ({name}); it is never picked "
                             "automatically: install the GPU's Vulkan driver, or use --backend cpu")
            return
        out["available"] = True
    except Exception as e:  # noqa: BLE001 - no adapter, no driver, or a broken wgpu
        out["reason"] = f"wgpu could not get an adapter: {e.__class__.__name__}: {e}"


def probe_vulkan(timeout: float = 15.0) -> dict[str, Any]:
    """wgpu importable and an adapter found (in a thread, so a stuck driver cannot hang --check)."""
    res: dict[str, Any] = {"name": "vulkan", "available": False, "reason": "", "devices": []}
    t = threading.Thread(target=_wgpu_adapter, args=(res,), daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        return {"name": "vulkan", "available": False, "devices": [],
                "reason": f"the wgpu adapter request did not answer within {timeout:.0f} s"}
    return res


def probe_backends(host: dict[str, Any]) -> list[dict[str, Any]]:
    cpu = {"name": "cpu", "available": True, "reason": "", "devices": [{
        "name": host["cpu"], "memory": host["ram_total"], "memory_free": host["ram_available"],
        "driver": f"NumPy {np.__version__}, {host['cores']} cores"}]}
    backends = [cpu, probe_cuda(), probe_vulkan()]
    implemented = _implemented_backends()
    for b in backends:
        b["implemented"] = b["name"] in implemented
    return backends


def device_memory(backend: dict[str, Any]) -> int | None:
    """What a model may use on a backend's first device: free memory (RAM available for cpu)."""
    if not backend["devices"]:
        return None
    dev = backend["devices"][0]
    return dev.get("memory_free") or dev.get("memory")


def choose_backend(backends: list[dict[str, Any]], wanted: str) -> dict[str, Any]:
    by_name = {b["name"]: b for b in backends}
    if wanted != "auto":
        return by_name[wanted]
    for name in ("cuda", "vulkan"):
        b = by_name[name]
        if b["available"] and b["implemented"]:
            return b
    return by_name["cpu"]
