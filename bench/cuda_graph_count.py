"""Do CUDA graphs instantiated after the first few launch their kernels more slowly? (session 18,
bench/cuda_tg_capture.py: the decode's graph replays 0.35 µs a kernel slower, its kernels no longer, once about four
graphs of a model step had been captured in the process, whatever came between them.)

    python bench/cuda_graph_count.py [--nodes 330] [--graphs 12] [--model MODEL.gguf] [--out DIR]

Part one, torch alone: --graphs graphs of --nodes small kernels each, captured one after another; each new graph's
µs a node (200 back-to-back replays, events); at the end graph 0 and the last again (do the old ones stay fast?).
Part two, with --model: six decode graphs on six 128-cell caches (all kept), each one's GPU µs a replay when new, then
all six again. JSON under --out.
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=330)
    ap.add_argument("--graphs", type=int, default=12)
    ap.add_argument("--model")
    ap.add_argument("--out")
    a = ap.parse_args()
    x = torch.ones(4096, device="cuda")
    graphs, rows = [], {"torch_new": [], "torch_again": {}, "model_new": [], "model_again": []}
    s = torch.cuda.Stream()
    for i in range(a.graphs):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.stream(s), torch.cuda.graph(g, stream=s):
            for _ in range(a.nodes):
                x.mul_(1.0001)
        graphs.append(g)
        us = replay_us(g)
        rows["torch_new"].append(us / a.nodes)
        print(f"torch graph {i:2}: {us / a.nodes:.3f} us a node", flush=True)
    for i in (0, len(graphs) - 1):
        rows["torch_again"][i] = replay_us(graphs[i]) / a.nodes
        print(f"torch graph {i:2} again: {rows['torch_again'][i]:.3f} us a node", flush=True)
    if a.model:
        from cuda_tg_state import tg_rates

        from zinc.api import load

        m = load(a.model, backend="cuda", n_ctx=256)
        caches, mgraphs = [], []
        for i in range(6):
            c = m.new_cache(128)
            tg_rates(m, c, runs=1)
            g = [v for k, v in m.ops._graphs.graphs.items() if k[-1] == "greedy"][-1]
            caches.append(c)
            mgraphs.append(g)
            c.reset()
            m.greedy(1, c, 2)
            g.count.zero_()
            us = replay_us(g.graph, 100)
            rows["model_new"].append(us)
            print(f"decode graph {i}: {us:.1f} us a replay", flush=True)
        for i, (c, g) in enumerate(zip(caches, mgraphs)):
            c.reset()
            m.greedy(1, c, 2)  # (the latest graph on this cache: the same one)
            g.count.zero_()
            rows["model_again"].append(replay_us(g.graph, 100))
            print(f"decode graph {i} again: {rows['model_again'][-1]:.1f} us a replay", flush=True)
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        (Path(a.out) / "graph-count.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
