"""Programmatic dependent launch (PDL) on a chain of Triton kernels in a CUDA graph: what it saves.

`python bench/cuda_pdl_check.py` on a Hopper GPU. A chain of M dependent launches is captured in a
CUDA graph and replayed; time per launch (median of replays) with and without PDL (`launch_pdl=True`
plus `gdc_launch_dependents` / `gdc_wait` at the top of the kernel), for
- tiny: y = 0.5 x + 1 over G programs (pure launch cost);
- stream: each launch reads its own slab of weights (rotating over more than the L2 holds, like the
  decode matvecs) and one value the previous launch wrote; `pre` issues the first weight loads
  before waiting for the previous kernel.
Checks the chain's final output against the same chain without PDL. Prints a table; writes
$OUT/cuda_pdl_check.json when OUT is set.
"""

from __future__ import annotations

import json
import os

import torch
import triton
import triton.language as tl
from triton.language.extra.cuda import gdc_launch_dependents, gdc_wait


@triton.jit
def tiny_kernel(x, y, n, PDL: tl.constexpr):
    if PDL:
        gdc_launch_dependents()
        gdc_wait()
    o = tl.program_id(0) * 256 + tl.arange(0, 256)
    tl.store(y + o, tl.load(x + o, mask=o < n) * 0.5 + 1.0, mask=o < n)


@triton.jit
def stream_kernel(w, x, y, ROW: tl.constexpr, PDL: tl.constexpr, PRE: tl.constexpr):
    pid = tl.program_id(0)
    base = w + pid.to(tl.int64) * ROW
    offs = tl.arange(0, 1024)
    acc = tl.zeros([1024], tl.int32)
    if PDL:
        gdc_launch_dependents()
    if PRE:
        acc += tl.load(base + offs)
        acc += tl.load(base + 1024 + offs)
    if PDL:
        gdc_wait()
    s = tl.load(x + pid % 64)
    for i in range(2 if PRE else 0, ROW // 1024):
        acc += tl.load(base + i * 1024 + offs)
    tl.store(y + pid, tl.sum(acc, axis=0).to(tl.float32) * 1e-9 + s * 0.5)


def graph_us(fn, m: int, reps: int = 20) -> float:
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    for _ in range(3):
        g.replay()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e3 / m)
    times.sort()
    return times[len(times) // 2]


def main() -> None:
    M = 300
    rows = []
    for G in (1, 132, 1024):
        n = G * 256
        bufs = [torch.randn(n, device="cuda"), torch.empty(n, device="cuda")]

        def chain(pdl: bool) -> None:
            for i in range(M):
                tiny_kernel[(G,)](bufs[i % 2], bufs[1 - i % 2], n, PDL=pdl, launch_pdl=pdl, num_warps=8)
        res = {}
        for pdl in (False, True):
            us = graph_us(lambda: chain(pdl), M)
            res[pdl] = bufs[M % 2].clone()
            rows.append({"case": "tiny", "G": G, "pdl": pdl, "us_per_launch": round(us, 3)})
            print(f"tiny   G={G:5d} pdl={pdl!s:5s}: {us:6.2f} us/launch", flush=True)
        assert torch.equal(res[False], res[True]), "tiny chain differs with PDL"
    for mb, prog in ((9.4, 576), (28.3, 1152), (2.4, 144)):
        words = int(mb * 2**20 / 4) // (prog * 1024) * (prog * 1024)
        row = words // prog
        nw = max(2, int(200 * 2**20 / 4 / words))  # rotate over > L2
        ws = [torch.randint(-1000, 1000, (words,), device="cuda", dtype=torch.int32) for _ in range(nw)]
        xs = [torch.randn(max(prog, 64), device="cuda") for _ in range(2)]
        out = {}
        for pdl, pre in ((False, False), (True, False), (True, True)):
            def chain() -> None:
                for i in range(M):
                    stream_kernel[(prog,)](ws[i % nw], xs[i % 2], xs[1 - i % 2], ROW=row, PDL=pdl, PRE=pre,
                                           launch_pdl=pdl, num_warps=4)
            us = graph_us(chain, M)
            out[(pdl, pre)] = xs[M % 2].clone()
            gbs = words * 4 / (us * 1e-6) / 1e9
            rows.append({"case": "stream", "MB": mb, "programs": prog, "pdl": pdl, "pre": pre,
                         "us_per_launch": round(us, 3), "GB_s": round(gbs, 1)})
            print(f"stream {mb:5.1f} MB x{prog:5d} pdl={pdl!s:5s} pre={pre!s:5s}: {us:6.2f} us/launch {gbs:7.0f} GB/s",
                  flush=True)
        ref = out[(False, False)]
        for k, v in out.items():
            assert torch.allclose(v, ref, rtol=1e-5, atol=1e-5), f"stream chain differs with {k}"
    print("outputs equal with and without PDL")
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "cuda_pdl_check.json"), "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
