"""Which prompt ingredient leaves a process's decode slower (session 15: tg128 486 fresh, 460 after any 512-token
prompt, the kernels' own time unchanged)?

    python bench/cuda_tg_state.py MODEL.gguf [--out DIR]

One process: greedy tg128 on a 128-cell cache, then after each ingredient in turn (the state is sticky): a small f32
cuBLAS product, a prompt-sized f16 cuBLAS product, a Triton dequantize of one weight, the flash prefill attention
kernel, a 64-token prompt, a 512-token prompt. Per tg: tok/s, and for 128 replays of the captured step the host's
time to enqueue them and the GPU's time (events). JSON under --out.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from pathlib import Path

import numpy as np
import torch

from zinc.api import load
from zinc.backends.cuda.kernels import flash as kflash


def loaded_kernels() -> list:
    """Every Triton kernel loaded on the GPU in this process (its `CompiledKernel`, with a function handle)."""
    from triton.compiler.compiler import CompiledKernel

    return [o for o in gc.get_objects() if isinstance(o, CompiledKernel) and getattr(o, "function", None)]


def tg_rates(m, cache, runs: int = 3, depth: int = 0) -> list[float]:
    """tok/s of `runs` greedy 128-token decodes from the start of `cache` (reset each time; with a depth, rolled
    back to its first `depth` tokens), after one untimed."""
    rates = []
    for r in range(runs + 1):
        if depth:
            cache.truncate(depth)
        else:
            cache.reset()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        m.greedy(1, cache, 128)
        torch.cuda.synchronize()
        if r:
            rates.append(128 / (time.perf_counter() - t0))
    return rates


def replay_times(m, cache, n: int = 100, g=None) -> tuple[float, float]:
    """n back-to-back replays of the greedy graph captured on `cache` (or the given one, `_Captured`): (GPU µs a
    replay by events, host µs to enqueue)."""
    if g is None:
        g = [v for k, v in m.ops._graphs.graphs.items() if k[-1] == "greedy"][-1]
    cache.reset()
    m.greedy(1, cache, 2)
    g.count.zero_()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    e0.record()
    for _ in range(n):
        g.graph.replay()
    e1.record()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return e0.elapsed_time(e1) * 1e3 / n, (t1 - t0) * 1e6 / n


def tg_new_cache(m) -> tuple[list[float], float, float, object]:
    """`tg_rates` then `replay_times` on a new 128-cell cache: (tok/s a run, GPU µs a replay, host µs to enqueue,
    the cache)."""
    cache = m.new_cache(128)
    rates = tg_rates(m, cache)
    return (rates, *replay_times(m, cache), cache)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--out")
    a = ap.parse_args()
    m = load(a.model, backend="cuda", n_ctx=4096)
    dev = torch.device("cuda")
    rng = np.random.default_rng(0)
    rows = []

    def tg(label: str) -> None:
        rates, gpu_us, host_us, _ = tg_new_cache(m)
        rows.append({"label": label, "tok_s": rates, "replay_gpu_us": gpu_us, "replay_host_enqueue_us": host_us})
        print(f"{label:34} {np.mean(rates):7.1f} tok/s  replay: gpu {gpu_us:7.1f} us, host enqueue {host_us:7.1f} us",
              flush=True)

    tg("fresh")
    tg("fresh again")
    x = torch.randn(64, 64, device=dev)
    torch.cuda.synchronize()
    (x @ x).sum().item()
    tg("after a 64x64 f32 cuBLAS product")
    a16 = torch.randn(512, 4096, device=dev, dtype=torch.float16)
    b16 = torch.randn(12288, 4096, device=dev, dtype=torch.float16)
    for _ in range(3):
        (a16 @ b16.t()).float().sum().item()
    tg("after 512x4096x12288 f16 products")
    m.ops.dequantize(next(w for w in m.weights.tensors.values() if getattr(w, "quantized", False)))
    torch.cuda.synchronize()
    tg("after a Triton dequantize")
    q = torch.randn(512, 32, 128, device=dev)
    k = torch.randn(512, 8, 128, device=dev, dtype=torch.float16)
    v = torch.randn(512, 8, 128, device=dev, dtype=torch.float16)
    pos = torch.arange(512, device=dev, dtype=torch.int32)
    out = torch.empty(512, 32, 128, device=dev)
    kflash.prefill_attention(q, k, v, pos, pos, 0.088, 0, 0.0, None, out)
    torch.cuda.synchronize()
    tg("after the flash prefill kernel")
    for n in (64, 512):
        cache = m.new_cache(n)
        m.forward([int(i) for i in rng.integers(0, m.n_vocab, n)], cache, last_only=True)
        torch.cuda.synchronize()
        tg(f"after a {n}-token prompt")
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        (Path(a.out) / "tg-state.json").write_text(json.dumps({"model": a.model, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
