"""Is the decode's slowdown after a prompt the capture of a prompt chunk? (session 18, bench/cuda_tg_trigger.py:
Qwen3-8B tg128 487 fresh and after a 512-token prompt, 460 after a 1,024-token one, whose second 512-token chunk is
the first repeat of that length on one cache, so graph.py captures it; Qwen3.5 522 -> 522 -> 474 after pp2048.)

    python bench/cuda_tg_capture.py MODEL.gguf [--pre none|lmemmax|stack] [--stack BYTES] EVENT... [--out DIR]

One process: tg128 fresh, then each EVENT in turn (the state is sticky), tg128 on a new 128-cell cache after each,
with the GPU µs a replay of the captured step and the sum of its kernels' own time under the profiler (a slower
replay shows as longer kernels or as longer gaps between them). --pre, before the model loads: lmemmax sets the
context's CU_CTX_LMEM_RESIZE_TO_MAX flag, stack its stack-size limit to --stack bytes. Events:
  tiny     a one-kernel graph captured by torch
  prompt2  a 512-token prompt twice on one cache (the second run is captured)
  drop     every captured step dropped (the graphs freed)
  empty    the allocator's cached blocks released (torch.cuda.empty_cache)
  free1g   1 GiB allocated, written, freed and released
  limit    the stack-size limit set to its own value
  bench    zinc bench's pp512 and pp2048 (each on its own cache, the verify first)
JSON under --out.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import sys
from pathlib import Path

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).parent))
from cuda_tg_state import tg_new_cache  # noqa: E402

from zinc.api import load  # noqa: E402
from zinc.bench import run_bench  # noqa: E402

STACK = 0  # CU_LIMIT_STACK_SIZE


def kernel_times(m, cache, n: int = 20) -> tuple[float, dict]:
    """One replay of the greedy graph on `cache` under the profiler (n replays): the summed device time of its
    kernels (µs), and per kernel name (60 characters) the µs a replay of idle time just before its launches."""
    g = [v for k, v in m.ops._graphs.graphs.items() if k[-1] == "greedy"][-1]
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(n):
            g.graph.replay()
        torch.cuda.synchronize()
    ks = sorted((e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA),
                key=lambda e: e.time_range.start)
    gaps: dict = {}
    for prev, e in zip(ks, ks[1:]):
        gap = e.time_range.start - prev.time_range.end
        if gap < 50:  # not the host's pause between two replays
            gaps[e.name[:60]] = gaps.get(e.name[:60], 0.0) + gap / n
    return sum(e.device_time for e in ks) / n, dict(sorted(gaps.items(), key=lambda kv: -kv[1]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("events", nargs="*")
    ap.add_argument("--pre", choices=["none", "lmemmax", "stack"], default="none")
    ap.add_argument("--stack", type=int, default=8192)
    ap.add_argument("--out")
    a = ap.parse_intermixed_args()
    cu = ctypes.CDLL("libcuda.so.1")
    torch.zeros(1, device="cuda")
    first_limit = ctypes.c_size_t(0)
    cu.cuCtxGetLimit(ctypes.byref(first_limit), STACK)
    if a.pre == "stack":
        print("set stack", a.stack, "->", cu.cuCtxSetLimit(STACK, ctypes.c_size_t(a.stack)))
    if a.pre == "lmemmax":
        flags = ctypes.c_uint(0)
        cu.cuCtxGetFlags(ctypes.byref(flags))
        print("set LMEM_RESIZE_TO_MAX ->", cu.cuCtxSetFlags(ctypes.c_uint(flags.value | 0x10)))
    m = load(a.model, backend="cuda", n_ctx=2304)
    ids = [int(i) for i in np.random.default_rng(0).integers(0, m.n_vocab, 512)]
    rows = []

    def tg(label: str) -> None:
        rates, us, _, cache = tg_new_cache(m)
        ks, gaps = kernel_times(m, cache)
        rows.append({"after": label, "tok_s": rates, "replay_gpu_us": us, "kernels_us": ks, "gaps_before": gaps})
        print(f"{label:10} {np.mean(rates):7.1f} tok/s  replay {us:7.1f} us  kernels {ks:7.1f} us  "
              f"gaps {us - ks:6.1f} us  captures {m.ops._graphs.captures}\n  gaps before (us): "
              f"{[(k[:24], round(v, 1)) for k, v in list(gaps.items())[:6]]}", flush=True)

    def event(name: str) -> None:
        if name == "tiny":
            x = torch.ones(1024, device="cuda")
            g, s = torch.cuda.CUDAGraph(), torch.cuda.Stream()
            with torch.cuda.stream(s), torch.cuda.graph(g, stream=s):
                x.add_(1)
            g.replay()
        elif name == "prompt2":
            cache = m.new_cache(520)
            for _ in range(2):
                cache.reset()
                m.forward(ids, cache, last_only=True)
        elif name == "drop":
            m.ops._graphs = None
            gc.collect()
        elif name == "empty":
            gc.collect()
            torch.cuda.empty_cache()
        elif name == "free1g":
            x = torch.ones(1 << 28, device="cuda")
            del x
            torch.cuda.empty_cache()
        elif name == "limit":
            print("  set the limit to", first_limit.value, "->", cu.cuCtxSetLimit(STACK, first_limit))
        elif name == "bench":
            run_bench(m, n_prompt=(512, 2048), n_gen=(), repetitions=2)
        else:
            raise SystemExit(f"unknown event {name!r}")
        torch.cuda.synchronize()

    tg("fresh")
    for name in a.events:
        event(name)
        tg(name)
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        name = "-".join([a.pre] + a.events)
        (Path(a.out) / f"tg-capture-{name}.json").write_text(json.dumps({"model": a.model, "pre": a.pre,
                                                                         "events": a.events, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
