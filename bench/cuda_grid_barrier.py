"""What a grid-wide barrier inside one persistent kernel costs on the GPU, against a kernel boundary in a graph.

    python bench/cuda_grid_barrier.py [--out DIR]   # GPU

A persistent decode kernel would replace each of the step's ~330 kernel boundaries by a barrier over its programs.
Here G programs (all resident: at most a few a multiprocessor) pass N barriers: each program's arrival is one
release atomic on a counter, then it spins on acquire loads until the counter reaches the barrier's count (a
monotone counter: barrier i waits for (i + 1) * G arrivals). Times per barrier for several G and warps, and for
reference the µs a node of a graph of N empty kernel launches and of N one-warp launches of G programs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
import triton
import triton.language as tl


@triton.jit
def barriers_kernel(counter, N, SPREAD: tl.constexpr):
    """N grid barriers; with SPREAD the program also reads one word the previous barrier's writer stored (so the
    acquire is needed), else nothing between barriers."""
    g = tl.num_programs(0)
    for i in range(N):
        tl.atomic_add(counter, 1, sem="release", scope="gpu")
        target = (i + 1) * g
        seen = tl.atomic_add(counter, 0, sem="acquire", scope="gpu")
        while seen < target:
            seen = tl.atomic_add(counter, 0, sem="acquire", scope="gpu")
        if SPREAD:
            tl.store(counter + 1 + tl.program_id(0), seen)


@triton.jit
def empty_kernel(x):
    pass


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    a = ap.parse_args()
    dev = torch.device("cuda")
    sms = torch.cuda.get_device_properties(dev).multi_processor_count
    rows = []
    n = 2000
    for g in (sms, 2 * sms, 4 * sms):
        for warps in (1, 4):
            counter = torch.zeros(1 + g, dtype=torch.int32, device=dev)
            barriers_kernel[(g,)](counter, 10, SPREAD=True, num_warps=warps)  # compile, warm
            torch.cuda.synchronize()
            counter.zero_()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            barriers_kernel[(g,)](counter, n, SPREAD=True, num_warps=warps)
            e.record()
            torch.cuda.synchronize()
            us = s.elapsed_time(e) * 1e3 / n
            ok = int(counter[0].item()) == n * g
            rows.append({"kind": "grid barrier", "programs": g, "warps": warps, "us": us, "count_ok": ok})
            print(f"grid barrier, {g:4d} programs of {warps} warps: {us:6.3f} us a barrier (count ok {ok})", flush=True)
    x = torch.zeros(1, device=dev)
    for g in (1, sms, 4 * sms):
        empty_kernel[(g,)](x, num_warps=1)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            with torch.cuda.graph(graph, stream=stream):
                for _ in range(500):
                    empty_kernel[(g,)](x, num_warps=1)
        graph.replay()
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(4):
            graph.replay()
        e.record()
        torch.cuda.synchronize()
        us = s.elapsed_time(e) * 1e3 / 2000
        rows.append({"kind": "empty kernel in a graph", "programs": g, "warps": 1, "us": us})
        print(f"empty kernel of {g:4d} programs in a graph: {us:6.3f} us a node", flush=True)
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        (Path(a.out) / "grid-barrier.json").write_text(json.dumps({"device": torch.cuda.get_device_name(),
                                                                   "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
