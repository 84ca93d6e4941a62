"""The read bandwidth a plain streaming kernel reaches on this GPU, per buffer size.

    python bench/cuda_read_ceiling.py [--out DIR]

For the sizes of a decode step's weight matrices (a few MB to a few hundred), one Triton kernel
sums int32 words (each program a contiguous chunk, 16-byte loads) and is timed by CUDA-graph replay
(copies rotated past the L2). Prints size, µs and TB/s: the ceiling the decode matvecs aim at.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
import triton
import triton.language as tl


@triton.jit
def _sum_kernel(x, out, n, CHUNK: tl.constexpr, STEP: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * CHUNK
    acc = tl.zeros([STEP], dtype=tl.int32)
    for o in range(0, CHUNK, STEP):
        i = base + o + tl.arange(0, STEP)
        acc += tl.load(x + i, mask=i < n, other=0)
    tl.store(out + tl.program_id(0), tl.sum(acc))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    rows = []
    for mb in (4.7, 9.4, 14.2, 28.3, 41.3, 56.6, 170.9):
        n = int(mb * 1e6) // 4
        copies = max(2, min(8, int(400 / mb)))
        xs = [torch.randint(0, 100, (n,), dtype=torch.int32, device="cuda") for _ in range(copies)]
        best = None
        for chunk, step, nw in ((2048, 512, 1), (4096, 1024, 2), (8192, 1024, 4), (16384, 2048, 4), (1024, 256, 1)):
            out = torch.empty(triton.cdiv(n, chunk), dtype=torch.int32, device="cuda")
            it = iter(range(1 << 30))

            def run():
                _sum_kernel[(triton.cdiv(n, chunk),)](xs[next(it) % copies], out, n, CHUNK=chunk, STEP=step,
                                                       num_warps=nw)
            run()
            with torch.cuda.stream(torch.cuda.Stream()):
                us = float(triton.testing.do_bench_cudagraph(run, rep=50, return_mode="median")) * 1e3
            r = {"MB": mb, "chunk": chunk, "step": step, "warps": nw, "us": us, "TBs": n * 4 / us / 1e6}
            rows.append(r)
            if best is None or us < best["us"]:
                best = r
        print(f"{mb:7.1f} MB  best {best['us']:7.2f} us  {best['TBs']:.2f} TB/s  (chunk {best['chunk']}, "
              f"step {best['step']}, warps {best['warps']})", flush=True)
        del xs
    if a.out:
        a.out.mkdir(parents=True, exist_ok=True)
        (a.out / "read-ceiling.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
