"""Is it the 4th graph *captured* or the 4th *instantiated* that makes every graph of a process launch its kernels
more slowly (session 19: 0.18 µs a node more for graphs of any content, bench/cuda_graph_count.py), and does an
instantiated graph updated in place (cuGraphExecUpdate) with another capture's graph stay fast?

    python bench/cuda_graph_inst.py [--nodes 330] [--graphs 8] [--out DIR]
    python bench/cuda_graph_inst.py --grow torch|keep|flags:F[+upload]|raw|into [--pre K] [--empty K] [--nodes 330] [--graphs 8] [--out DIR]

Graphs of --nodes Triton kernels (16 compiled variants in turn), captured with torch's keep_graph (a capture without
an instantiation). Steps: capture all; instantiate graph 0 (timed); instantiate graphs 1, 2; write graphs 3..N-1
into graph 0's executable one after another (each update timed on the host, then graph 0 replayed); instantiate
graph 3 (the 4th instantiation); time 0 and 3 again. With --grow: graphs captured and instantiated one at a time
(torch: as torch does by default; keep: keep_graph, then torch's instantiate; flags:F: keep_graph, then libcuda's
cuGraphInstantiateWithFlags with flags F and launched by cuGraphLaunch, +upload: then cuGraphUpload; raw: captured by libcuda, torch unaware; into: the same,
every capture into one graph object, emptied between), every graph so far timed after each (after --pre graphs of one node); then the executables from the 4th on destroyed and the first three timed again. JSON under
--out.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from cuda_graph_count import node_maker, replay_us  # noqa: E402


def grow(a, node, s, cu) -> list:
    """The --grow sequence (see the module's doc): rows of (step, µs a node of each graph so far)."""
    mode, flags, upload = a.grow, 0, False
    if mode.startswith("flags:"):
        spec = mode.split(":", 1)[1]
        upload = spec.endswith("+upload")
        flags = int(spec.removesuffix("+upload"))
    graphs, launch, rows = [], [], []
    stream = torch.cuda.current_stream()
    tiny = []
    for i in range(a.pre):  # graphs of one node first (kept)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.stream(s), torch.cuda.graph(g, stream=s):
            node(i)
        g.replay()
        tiny.append(g)

    def timed(i: int, n: int = 200) -> float:
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        launch[i]()
        e0.record()
        for _ in range(n):
            launch[i]()
        e1.record()
        torch.cuda.synchronize()
        return e0.elapsed_time(e1) * 1e3 / n / a.nodes

    def table(label: str, which) -> None:
        us = {i: round(timed(i), 3) for i in which}
        rows.append({"step": label, "us_a_node": us})
        print(f"{label:34}", " ".join(f"{i}:{v:.3f}" for i, v in us.items()), flush=True)

    vp = ctypes.c_void_p
    for _ in range(a.empty):  # empty graph objects first (kept)
        e = vp()
        assert cu.cuGraphCreate(ctypes.byref(e), 0) == 0
        tiny.append(e)
    shared = vp()
    if mode == "into":
        assert cu.cuGraphCreate(ctypes.byref(shared), 0) == 0
    st = vp(s.cuda_stream)
    for i in range(a.graphs):
        if mode in ("raw", "into"):  # captured by libcuda, torch unaware (the nodes are Triton launches on s)
            if mode == "into" and i:  # the shared graph emptied, then captured into again
                n = ctypes.c_size_t(0)
                assert cu.cuGraphGetNodes(shared, None, ctypes.byref(n)) == 0
                nodes = (vp * n.value)()
                assert cu.cuGraphGetNodes(shared, nodes, ctypes.byref(n)) == 0
                for nd in nodes:
                    assert cu.cuGraphDestroyNode(vp(nd)) == 0
            torch.cuda.synchronize()
            if mode == "into":
                rc = cu.cuStreamBeginCaptureToGraph(st, shared, None, None, ctypes.c_size_t(0), 0)
            else:
                rc = cu.cuStreamBeginCapture_v2(st, 0)
            assert rc == 0, f"begin capture -> {rc}"
            with torch.cuda.stream(s):
                for j in range(a.nodes):
                    node(j + i)
            g = vp()
            assert cu.cuStreamEndCapture(st, ctypes.byref(g)) == 0
            ex = vp()
            assert cu.cuGraphInstantiateWithFlags(ctypes.byref(ex), g, ctypes.c_ulonglong(0)) == 0
            launch.append(lambda ex=ex: cu.cuGraphLaunch(ex, vp(stream.cuda_stream)))
            graphs.append((g, ex))
            table(f"{mode}: {i + 1} instantiated", range(i + 1))
            continue
        g = torch.cuda.CUDAGraph(keep_graph=mode != "torch")
        with torch.cuda.stream(s), torch.cuda.graph(g, stream=s):
            for j in range(a.nodes):
                node(j + i)
        graphs.append(g)
        if mode == "torch":
            launch.append(g.replay)
        elif mode == "keep":
            g.instantiate()
            launch.append(g.replay)
        else:
            ex = ctypes.c_void_p()
            rc = cu.cuGraphInstantiateWithFlags(ctypes.byref(ex), ctypes.c_void_p(g.raw_cuda_graph()),
                                                ctypes.c_ulonglong(flags))
            assert rc == 0, f"cuGraphInstantiateWithFlags -> {rc}"
            st = ctypes.c_void_p(stream.cuda_stream)
            if upload:
                assert cu.cuGraphUpload(ex, st) == 0
            launch.append(lambda ex=ex, st=st: cu.cuGraphLaunch(ex, st))
            g.execs = ex
        table(f"{mode}: {i + 1} instantiated", range(i + 1))
    for i in range(3, a.graphs):
        if mode in ("raw", "into"):
            cu.cuGraphExecDestroy(graphs[i][1])
        elif mode in ("torch", "keep"):
            graphs[i].reset()
        else:
            cu.cuGraphExecDestroy(graphs[i].execs)
    torch.cuda.synchronize()
    table(f"{mode}: 4th on destroyed", range(3))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=330)
    ap.add_argument("--graphs", type=int, default=8)
    ap.add_argument("--grow")
    ap.add_argument("--pre", type=int, default=0, help="with --grow: graphs of one node captured first")
    ap.add_argument("--empty", type=int, default=0, help="with --grow: empty graphs created first (cuGraphCreate)")
    ap.add_argument("--out")
    a = ap.parse_args()
    cu = ctypes.CDLL("libcuda.so.1")
    print("torch", torch.__version__, flush=True)
    x = torch.ones(4096, device="cuda")
    node = node_maker("triton16", x)
    s = torch.cuda.Stream()
    graphs, rows = [], []
    if a.grow:
        rows = grow(a, node, s, cu)
        if a.out:
            Path(a.out).mkdir(parents=True, exist_ok=True)
            name = a.grow.replace(":", "-").replace("+", "-") + f"-n{a.nodes}-pre{a.pre}-empty{a.empty}"
            (Path(a.out) / f"graph-grow-{name}.json").write_text(json.dumps({"nodes": a.nodes, "rows": rows}, indent=1))
        return

    def row(label: str, g: torch.cuda.CUDAGraph, **kw) -> None:
        us = replay_us(g) / a.nodes
        rows.append({"step": label, "us_a_node": us, **kw})
        print(f"{label:52} {us:.3f} us a node {kw or ''}", flush=True)

    for i in range(a.graphs):
        g = torch.cuda.CUDAGraph(keep_graph=True)
        with torch.cuda.stream(s), torch.cuda.graph(g, stream=s):
            for j in range(a.nodes):
                node(j + i)  # (each graph its own order of the 16 variants: the same topology, other kernels)
        graphs.append(g)
    graphs[0].instantiate()
    row(f"{a.graphs} captured, graph 0 instantiated", graphs[0])
    graphs[1].instantiate()
    graphs[2].instantiate()
    row("graphs 1, 2 instantiated too: graph 0", graphs[0])
    row("graph 2", graphs[2])
    exec0 = ctypes.c_void_p(graphs[0].raw_cuda_graph_exec())
    for i in range(3, a.graphs):
        info = (ctypes.c_byte * 64)()
        torch.cuda.synchronize()
        t = time.perf_counter()
        rc = cu.cuGraphExecUpdate_v2(exec0, ctypes.c_void_p(graphs[i].raw_cuda_graph()), info)
        dt = (time.perf_counter() - t) * 1e6
        row(f"graph {i} written into graph 0's executable", graphs[0], rc=rc, result=info[0], update_us=round(dt, 1))
    graphs[3].instantiate()
    row("graph 3 instantiated (the 4th): graph 3", graphs[3])
    row("graph 0", graphs[0])
    for i in range(4, a.graphs):
        graphs[i].instantiate()
    row(f"graphs 4..{a.graphs - 1} instantiated: graph 0", graphs[0])
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        (Path(a.out) / "graph-inst.json").write_text(json.dumps({"nodes": a.nodes, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
