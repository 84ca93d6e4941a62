"""Can a new cache's decode reuse an instantiated graph instead of a 4th one? (session 18: once a process has
instantiated four graphs of a model step, every graph launches its kernels 0.35 µs more slowly, bench/RESULTS.md.)

    python bench/cuda_graph_update.py MODEL.gguf [--out DIR]

One process: greedy decode graphs on three 128-cell caches, captured as zinc does (each instantiated); then a 4th
cache's step captured without instantiating (torch's keep_graph) and written into the first cache's executable
graph by cuGraphExecUpdate (same kernels, other addresses), its 48 greedy tokens checked against those of cache 0's
graph before, and its replay timed; then a 5th cache captured as zinc does (a 4th instantiation), all timed again.
JSON under --out.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from cuda_tg_state import replay_times, tg_rates  # noqa: E402

from zinc.api import load  # noqa: E402


def recycling_graph(donor: torch.cuda.CUDAGraph):
    """A CUDAGraph class whose capture is written into `donor`'s executable graph (replays then launch donor's),
    or instantiated on its own if the update is refused (printed)."""
    cu = ctypes.CDLL("libcuda.so.1")

    class Recycled(torch.cuda.CUDAGraph):
        def __new__(cls, keep_graph: bool = False):
            return super().__new__(cls, keep_graph=True)

        def capture_end(self) -> None:
            super().capture_end()
            info = (ctypes.c_byte * 64)()
            rc = cu.cuGraphExecUpdate_v2(ctypes.c_void_p(donor.raw_cuda_graph_exec()),
                                         ctypes.c_void_p(self.raw_cuda_graph()), info)
            self.updated = rc == 0
            print(f"cuGraphExecUpdate_v2 -> {rc} (result {info[0]})", flush=True)
            if not self.updated:
                self.instantiate()

        def replay(self) -> None:
            if self.updated:
                donor.replay()
            else:
                super().replay()

    return Recycled


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--out")
    a = ap.parse_args()
    m = load(a.model, backend="cuda", n_ctx=256)
    rows, caches = [], []

    def greedy_graph(cache):
        return next(g for k, g in m.ops._graphs.graphs.items() if k[-1] == "greedy" and k[3] == id(cache))

    def timed(label: str, cache) -> None:
        us = replay_times(m, cache, g=greedy_graph(cache))[0]
        rows.append({"graph": label, "replay_gpu_us": us})
        print(f"{label:46} replay {us:7.1f} us", flush=True)

    for i in range(3):
        c = m.new_cache(128)
        tg_rates(m, c, runs=1)
        caches.append(c)
        timed(f"cache {i}, instantiated", c)
    caches[0].reset()
    want = m.greedy(1, caches[0], 48)  # (every cache starts empty: the same tokens from each)
    c3 = m.new_cache(128)
    donor = greedy_graph(caches[0]).graph
    plain = torch.cuda.CUDAGraph
    torch.cuda.CUDAGraph = recycling_graph(donor)
    try:
        got = m.greedy(1, c3, 48)
    finally:
        torch.cuda.CUDAGraph = plain
    same = got == want
    print(f"cache 3 through cache 0's executable graph: the same 48 tokens as cache 0's own: {same}", flush=True)
    rows.append({"tokens_equal": same, "want": want, "got": got})
    timed("cache 3, written into cache 0's graph", c3)
    c4 = m.new_cache(128)
    tg_rates(m, c4, runs=1)
    timed("cache 4, instantiated (the 4th instantiation)", c4)
    timed("cache 3 again", c3)
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        (Path(a.out) / "graph-update.json").write_text(json.dumps({"model": a.model, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
