"""Experiment: the streams matvec (`kernels/mmvs.py`) as a persistent grid, against its one-program-a-row-group grid.

    python bench/cuda_mmvs_persist.py [--out DIR]   # GPU: check, then time (µs a call in a replayed CUDA graph)

Each decode matvec launches thousands of one-warp programs (the GLU 6,144, the O projection 2,048). Here a grid of
G programs (a multiple of the multiprocessors) walks the same row groups, program p taking groups p, p + G, ...:
`mmvs._program` unchanged inside the loop. The question is whether the block scheduler's launches of many small
programs cost bandwidth that a few long-lived programs save. For every Qwen3-8B Q4_K_M decode shape (the backend's
configuration, `mmvq.config`) it checks the persistent form against `mmvs.launch` (same arithmetic: equal to f32
rounding) and times both, weight copies rotated past the L2. Prints a table and writes DIR/mmvs-persist.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch
import triton
import triton.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from cuda_mmvq_sweep import bench_us  # noqa: E402
from zinc.backends.cuda.kernels import mmvq, mmvs  # noqa: E402

Q4K, Q6K = 12, 14
SHAPES = [(Q4K, 4096, 4096, False), (Q4K, 6144, 4096, False), (Q4K, 12288, 4096, True), (Q4K, 4096, 12288, False),
          (Q6K, 4096, 12288, False)]


@triton.jit
def persist_kernel(xq, xd, xs, out, a, b, c, d, a2, b2, c2, d2, N, K, so, UO, NPROG, QT: tl.constexpr,
                   R: tl.constexpr, NP: tl.constexpr, ASM: tl.constexpr, EVEN: tl.constexpr, ACT: tl.constexpr,
                   U: tl.constexpr):
    """Row groups pid, pid + G, ... (G = the grid) of `mmvs.mmvs_kernel`'s column 0."""
    for pid in range(tl.program_id(0), NPROG, tl.num_programs(0)):
        mmvs._program(xq, xd, xs, out, a, b, c, d, a2, b2, c2, d2, out, N, K, so, 1, 0, UO, pid, 0, QT, R, NP, ASM,
                      EVEN, ACT, U, False)


def persist(xqt, wa, wb, qtype, n, k, out, cfg, act, grid):
    xq, xd, xs = xqt
    r, upt, nw, u = cfg
    npu = 32 * nw * upt
    units = mmvs.k_units(qtype, k)
    persist_kernel[(grid,)](xq, xd, xs, out, *wa, *(wb or wa), n, k, out.stride(0), 0, triton.cdiv(n, r), QT=qtype,
                            R=r, NP=npu, ASM=True, EVEN=units % (npu * u) == 0, ACT=act if wb else -1, U=u,
                            num_warps=nw, num_stages=1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    a = ap.parse_args()
    from zinc.backends.base import QTensor
    from zinc.backends.cuda.weights import CudaWeight
    from zinc.gguf.constants import GGMLType
    from zinc.gguf.quants import random_blocks

    dev = torch.device("cuda")
    sms = torch.cuda.get_device_properties(dev).multi_processor_count
    rows, table = [], []
    for qt, n, k, glu in SHAPES:
        gt = GGMLType(qt)
        rng = np.random.default_rng(n + k)
        cfg = mmvq.config(qt, n, k, glu)
        c4 = (cfg[0], cfg[1], cfg[2], cfg[6] if len(cfg) > 6 else 1)
        qts = [QTensor(f"w{i}", gt, (n, k), random_blocks(gt, n * k, rng, scale=0.05)) for i in range(2 if glu else 1)]
        nbytes = len(qts) * n * k * (144 if qt == Q4K else 210) // 256
        copies = min(16, max(2, -(-150_000_000 // nbytes)))  # past the L2
        ws = [[CudaWeight(q, dev) for q in qts] for _ in range(copies)]
        wd = [[mmvq.words(w.parts, qt, True) for w in c] for c in ws]
        xqt = mmvq.quantize_x(torch.randn((1, k), device=dev))
        want = torch.empty((1, n), device=dev)
        mmvs.launch(xqt, wd[0][0], wd[0][1] if glu else None, qt, n, k, want, c4, 0 if glu else -1)
        it = iter(range(1 << 30))

        def base():
            w = wd[next(it) % copies]
            mmvs.launch(xqt, w[0], w[1] if glu else None, qt, n, k, want2, c4, 0 if glu else -1)

        want2 = torch.empty_like(want)
        res = {"shape": f"{'Q4_K' if qt == Q4K else 'Q6_K'} {n}x{k}{' GLU' if glu else ''}", "cfg": list(c4),
               "us": {}}
        for rep in range(2):
            res["us"].setdefault("grid", []).append(bench_us(base, 60))
            for mult in (2, 4, 8, 16, 32):
                g = sms * mult
                if g >= triton.cdiv(n, c4[0]):
                    continue
                got = torch.empty_like(want)
                persist(xqt, wd[0][0], wd[0][1] if glu else None, qt, n, k, got, c4, 0 if glu else -1, g)
                err = float((got - want).abs().max() / want.abs().max())
                assert err < 1e-6, (res["shape"], g, err)

                def pf(g=g):
                    w = wd[next(it) % copies]
                    persist(xqt, w[0], w[1] if glu else None, qt, n, k, want2, c4, 0 if glu else -1, g)

                res["us"].setdefault(f"persist {mult}x{sms}", []).append(bench_us(pf, 60))
        rows.append(res)
        for name, v in res["us"].items():
            table.append(f"{res['shape']:22} {name:16} {min(v):7.2f} us  ({', '.join(f'{x:.2f}' for x in v)})")
            print(table[-1], flush=True)
    print("\n".join(table))
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        (Path(a.out) / "mmvs-persist.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
