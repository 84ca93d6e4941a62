"""Do CUDA graphs instantiated after the first few launch their kernels more slowly? (session 18,
bench/cuda_tg_capture.py: the decode's graph replays 0.35 µs a kernel slower, its kernels no longer, once about four
graphs of a model step had been captured in the process, whatever came between them.)

    python bench/cuda_graph_count.py [--kind inplace|alloc|triton32|triton16|memcpy] [--nodes 330] [--graphs 12]
                                     [--model MODEL.gguf] [--out DIR]

Part one: --graphs graphs of --nodes small kernels each, captured one after another; each new graph's µs a node (200
back-to-back replays, events); at the end graph 0 and the last again (do the old ones stay fast?). Kinds of node:
inplace, torch's x *= 1.0001; alloc, the same out of place (each output a new block of the graphs' memory pool);
triton32, a Triton kernel taking 24 pointers and 8 scalars, as a model step's kernels do; triton16, one of 16 compiled
Triton kernels in turn (16 functions, as a step has about 12); memcpy, a device-to-device copy then x *= 1.0001.
Part two, with --model: six decode graphs on six 128-cell caches (all kept), each one's GPU µs a replay when new, then
all six again, and the Triton kernels' registers and spills. JSON under --out.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))


def replay_us(g: torch.cuda.CUDAGraph, n: int = 200) -> float:
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    g.replay()
    torch.cuda.synchronize()
    e0.record()
    for _ in range(n):
        g.replay()
    e1.record()
    torch.cuda.synchronize()
    return e0.elapsed_time(e1) * 1e3 / n


def node_maker(kind: str, x: torch.Tensor):
    """node(j): launch node j of a graph of that kind (compiled and loaded first: a first load inside a capture
    fails it)."""
    import triton
    import triton.language as tl

    @triton.jit
    def many_args(x, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, p19, p20, p21,
                  p22, p23, n, s1, s2, s3, s4, s5, s6, s7, B: tl.constexpr):
        o = tl.program_id(0) * B + tl.arange(0, B)
        tl.store(x + o, tl.load(x + o, mask=o < n) * 1.0001, mask=o < n)

    @triton.jit
    def variant(x, n, V: tl.constexpr, B: tl.constexpr):
        o = tl.program_id(0) * B + tl.arange(0, B)
        tl.store(x + o, tl.load(x + o, mask=o < n) * (1.0 + V * 1e-6), mask=o < n)

    ys = [torch.empty(64, device="cuda") for _ in range(23)]
    x2 = torch.empty_like(x)
    held = [x]

    def node(j: int) -> None:
        if kind == "inplace":
            x.mul_(1.0001)
        elif kind == "alloc":
            held.append(held[-1] * 1.0001)
        elif kind == "triton32":
            many_args[(16,)](x, *ys, x.numel(), 5, 2, 3, 4, 5, 6, 7, B=256)  # (no j: a new int value specializes)
        elif kind == "triton16":
            variant[(16,)](x, x.numel(), V=j % 16, B=256)
        else:
            x2.copy_(x)
            x.mul_(1.0001)

    for j in range(16):
        node(j)
    del held[1:]
    torch.cuda.synchronize()
    return node


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=330)
    ap.add_argument("--graphs", type=int, default=12)
    ap.add_argument("--kind", choices=["inplace", "alloc", "triton32", "triton16", "memcpy"], default="inplace")
    ap.add_argument("--model")
    ap.add_argument("--out")
    a = ap.parse_args()
    x = torch.ones(4096, device="cuda")
    graphs, rows = [], {"torch_new": [], "torch_again": {}, "model_new": [], "model_again": []}
    s = torch.cuda.Stream()
    node = node_maker(a.kind, x)
    for i in range(a.graphs):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.stream(s), torch.cuda.graph(g, stream=s):
            for j in range(a.nodes):
                node(j)
        graphs.append(g)
        us = replay_us(g)
        rows["torch_new"].append(us / a.nodes)
        print(f"{a.kind} graph {i:2}: {us / a.nodes:.3f} us a node", flush=True)
    for i in sorted({0, len(graphs) - 1}) if graphs else ():
        rows["torch_again"][i] = replay_us(graphs[i]) / a.nodes
        print(f"{a.kind} graph {i:2} again: {rows['torch_again'][i]:.3f} us a node", flush=True)
    if a.model:
        from cuda_tg_state import replay_times, tg_rates

        from zinc.api import load

        m = load(a.model, backend="cuda", n_ctx=256)
        caches, mgraphs = [], []
        for i in range(6):
            c = m.new_cache(128)
            tg_rates(m, c, runs=1)
            g = [v for k, v in m.ops._graphs.graphs.items() if k[-1] == "greedy"][-1]
            caches.append(c)
            mgraphs.append(g)
            us = replay_times(m, c, g=g)[0]
            rows["model_new"].append(us)
            print(f"decode graph {i}: {us:.1f} us a replay", flush=True)
        for i, (c, g) in enumerate(zip(caches, mgraphs)):
            rows["model_again"].append(replay_times(m, c, g=g)[0])
            print(f"decode graph {i} again: {rows['model_again'][-1]:.1f} us a replay", flush=True)
        from cuda_tg_state import loaded_kernels

        rows["triton"] = sorted({(k.name, k.n_regs, k.n_spills) for k in loaded_kernels()})
        print("Triton kernels (name, registers, spill bytes):", rows["triton"], flush=True)
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        (Path(a.out) / f"graph-count-{a.kind}.json").write_text(json.dumps({"kind": a.kind, "nodes": a.nodes, **rows},
                                                                             indent=1))


if __name__ == "__main__":
    main()
