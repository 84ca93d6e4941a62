"""`zinc --check`: the host, the backends, a model's shape and its memory need, and a verdict.

`run_check` gathers it all as a dict (the --json output) and `print_check` prints it; `model_info` reads a
GGUF file's architecture, size, quant mix and attention shape, and `kv_cache_bytes` sizes its KV cache for a
context and cell type. `zinc.cli` maps the flags onto `run_check`.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from zinc import __version__
from zinc.machine import choose_backend, device_memory, host_info, probe_backends
from zinc.options import KV_BYTES, RuntimeOptions

FALLBACK_ARCHITECTURES = ("llama", "qwen3", "qwen3moe", "gemma3")
FILE_TYPES = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K",
              11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S",
              17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS",
              23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S", 29: "IQ2_M",
              30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0", 37: "TQ2_0", 38: "MXFP4_MOE"}
WARN_FRACTION = 0.85  # memory use above this share of the device's memory is a warning
GIB = 2**30


def _gib(n: float | None) -> str:
    return "unknown" if n is None else f"{n / GIB:.2f} GiB"


def supported_architectures() -> list[str]:
    try:
        from zinc.models.registry import supported_architectures as sa
        return list(sa())
    except Exception:  # noqa: BLE001 - the models package may be mid-way through being built
        return list(FALLBACK_ARCHITECTURES)


def _per_layer(value: Any, n_layers: int) -> list[int]:
    if value is None:
        return []
    if isinstance(value, (list, tuple, np.ndarray)):
        vals = [int(v) for v in list(value)[:n_layers]]
        return vals + [vals[-1] if vals else 0] * (n_layers - len(vals))
    return [int(value)] * n_layers


def model_info(path: Path) -> dict[str, Any]:
    """Architecture, size, quant mix and attention shape of a GGUF file (GGUFError when corrupt)."""
    from zinc.gguf import GGUFFile

    with GGUFFile(path) as f:
        md, arch = f.metadata, f.architecture

        def key(name: str, default: Any = None) -> Any:
            return md.get(f"{arch}.{name}", default)

        mix: Counter = Counter()
        count: Counter = Counter()
        for t in f.tensors.values():
            mix[t.ggml_type.name] += t.nbytes
            count[t.ggml_type.name] += 1
        n_layers = int(key("block_count", 0) or 0)
        n_embd = int(key("embedding_length", 0) or 0)
        heads = _per_layer(key("attention.head_count"), n_layers)
        kv_heads = _per_layer(key("attention.head_count_kv"), n_layers) or heads
        head_dim = n_embd // max(heads) if heads and max(heads) else 0
        ftype = md.get("general.file_type")
        return {
            "path": str(path), "file_bytes": path.stat().st_size, "name": md.get("general.name"),
            "architecture": arch, "file_type": FILE_TYPES.get(ftype, str(ftype) if ftype is not None else None),
            "params": sum(t.n_elements for t in f.tensors.values()),
            "weights_bytes": sum(mix.values()), "n_tensors": len(f.tensors),
            "quant_mix": {k: {"tensors": count[k], "bytes": v} for k, v in mix.most_common()},
            "context_length": int(key("context_length", 0) or 0) or None,
            "block_count": n_layers, "embedding_length": n_embd,
            "head_count_kv": kv_heads, "key_length": int(key("attention.key_length", head_dim) or head_dim),
            "value_length": int(key("attention.value_length", head_dim) or head_dim),
            "sliding_window": key("attention.sliding_window"),
            "vocab_size": len(md.get("tokenizer.ggml.tokens", []) or []),
        }


def kv_cache_bytes(info: dict[str, Any], n_ctx: int, kv_type: str = "f16") -> int:
    """K and V for every attention layer at n_ctx positions in cells of kv_type: an upper bound (no window)."""
    per_token = sum(h * (info["key_length"] + info["value_length"]) for h in info["head_count_kv"])
    return int(per_token * n_ctx * KV_BYTES[kv_type])


def _resolve_check_model(opts: RuntimeOptions, model: str | None, model_id: str | None,
                         report: dict) -> Path | None:
    """The file to check: -m PATH (or catalog id), --model-id ID, else the active/embedded model."""
    from zinc.catalog import CatalogError, ModelStore

    store = ModelStore(opts.home)
    given = model or model_id
    try:
        if model and (Path(model).exists() or "/" in model or model.endswith(".gguf")):
            return Path(model)
        if given:
            return store.model_path(given)
        active, default = store.effective_active()
        if active is None:
            report["warnings"].append("no model given and none active: checked the machine only "
                                      "(use -m PATH or --model-id ID)")
            return None
        report["model_source"] = f"{'default' if default else 'active'} model {active}"
        return store.model_path(active)
    except CatalogError as e:
        report["problems"].append(str(e))
        return None


def _check_model(path: Path, opts: RuntimeOptions, backend: dict, report: dict) -> None:
    from zinc.errors import GGUFError

    if not path.is_file():
        report["problems"].append(f"{path}: no such file")
        return
    try:
        info = model_info(path)
    except GGUFError as e:
        report["problems"].append(f"corrupt or unreadable GGUF: {e}")
        return
    except OSError as e:
        report["problems"].append(f"cannot read {path}: {e}")
        return
    report["model"] = info
    supported = supported_architectures()
    info["supported"] = info["architecture"] in supported
    if not info["supported"]:
        report["problems"].append(f"architecture {info['architecture']!r} is not supported "
                                  f"(supported: {', '.join(supported)})")
    n_ctx = opts.context_for(info["context_length"])
    if info["context_length"] and n_ctx > info["context_length"]:
        report["warnings"].append(f"context {n_ctx} is longer than the model's trained context "
                                  f"{info['context_length']}")
    kv_type = opts.kv_type or "f16"
    weights, kv = info["weights_bytes"], kv_cache_bytes(info, n_ctx, kv_type)
    overhead = 256 * 2**20 + weights // 20  # activations, logits, scratch: a rough margin
    need, have = weights + kv + overhead, device_memory(backend)
    report["memory"] = {"backend": backend["name"], "n_ctx": n_ctx, "weights": weights, "kv_cache": kv,
                        "kv_type": kv_type,
                        "overhead": overhead, "total": need, "device_memory": have}
    where = f"{backend['name']} ({backend['devices'][0]['name']})" if backend["devices"] else backend["name"]
    if have is None:
        report["warnings"].append(f"the memory of {where} is unknown: cannot tell whether {_gib(need)} fit")
    elif need > have:
        report["problems"].append(f"does not fit: needs {_gib(need)} (weights {_gib(weights)} + KV cache "
                                  f"{_gib(kv)} at context {n_ctx}), {where} has {_gib(have)}")
    elif need > WARN_FRACTION * have:
        report["warnings"].append(f"tight fit: needs {_gib(need)} of {_gib(have)} on {where}")


def run_check(opts: RuntimeOptions, model: str | None = None, model_id: str | None = None) -> dict[str, Any]:
    """Everything --check reports, as a dict (also the --json output); model: -m PATH or id, model_id: --model-id."""
    host = host_info()
    backends = probe_backends(host)
    report: dict[str, Any] = {"zinc": __version__, "host": host, "backends": backends, "model": None,
                              "memory": None, "problems": [], "warnings": [],
                              "supported_architectures": supported_architectures()}
    backend = choose_backend(backends, opts.backend)
    report["backend"] = backend["name"]
    if not backend["available"]:
        report["problems"].append(f"backend {backend['name']} is not available: {backend['reason']}")
    elif not backend["implemented"]:
        report["problems"].append(f"backend {backend['name']} works on this machine but zinc {__version__} "
                                  "does not implement it yet")
    path = _resolve_check_model(opts, model, model_id, report)
    if path is not None:
        _check_model(path, opts, backend, report)
    if report["problems"]:
        report["verdict"], report["tag"] = "NOT READY", "FAIL"
    elif report["warnings"]:
        report["verdict"], report["tag"] = "READY WITH WARNINGS", "WARN"
    else:
        report["verdict"], report["tag"] = "READY", "OK"
    return report


def _print_model(info: dict[str, Any], mem: dict[str, Any] | None) -> None:
    mix = ", ".join(f"{k}×{v['tensors']} ({_gib(v['bytes'])})" for k, v in info["quant_mix"].items())
    print("Model")
    print(f"  file          {info['path']} ({_gib(info['file_bytes'])})")
    print(f"  name          {info['name'] or '-'}")
    print(f"  architecture  {info['architecture']} ({'supported' if info['supported'] else 'NOT supported'})")
    print(f"  parameters    {info['params'] / 1e9:.3f} B in {info['n_tensors']} tensors")
    print(f"  file type     {info['file_type'] or '-'}; quant mix: {mix}")
    print(f"  context       {info['context_length'] or 'unknown'} (trained); {info['block_count']} layers, "
          f"embedding {info['embedding_length']}, vocab {info['vocab_size']}")
    if mem:
        print(f"Memory (backend {mem['backend']}, context {mem['n_ctx']})")
        print(f"  weights       {_gib(mem['weights'])}")
        print(f"  KV cache      {_gib(mem['kv_cache'])} ({mem['kv_type']}, every attention layer at full context)")
        print(f"  overhead      {_gib(mem['overhead'])} (estimate)")
        print(f"  total         {_gib(mem['total'])} of {_gib(mem['device_memory'])} available")


def print_check(report: dict[str, Any]) -> None:
    h = report["host"]
    print(f"zinc {report['zinc']} --check")
    print("Host")
    print(f"  OS            {h['os']}")
    print(f"  Python        {h['python']}")
    print(f"  CPU           {h['cpu']} ({h['cores']} cores)")
    print(f"  RAM           {_gib(h['ram_total'])} total, {_gib(h['ram_available'])} available")
    print("Backends")
    for b in report["backends"]:
        tag = "[OK]  " if b["available"] and b["implemented"] else "[--]  "
        if b["available"]:
            devs = "; ".join(f"{d['name']} ({_gib(d['memory'])}, {d['driver']})" for d in b["devices"])
            extra = "" if b["implemented"] else " (not implemented in zinc yet)"
            print(f"  {b['name']:8s} {tag}{devs}{extra}{'; ' + b['note'] if b.get('note') else ''}")
        else:
            print(f"  {b['name']:8s} {tag}unavailable: {b['reason']}")
    print(f"  chosen: {report['backend']}")
    print(f"Supported architectures: {', '.join(report['supported_architectures'])}")
    if report.get("model_source"):
        print(f"Checking the {report['model_source']}")
    if report["model"]:
        _print_model(report["model"], report["memory"])
    for w in report["warnings"]:
        print(f"WARNING: {w}")
    for p in report["problems"]:
        print(f"PROBLEM: {p}")
    print(f"{report['verdict']} [{report['tag']}]")
