"""Is the decode matvec's read pattern what keeps it off the read ceiling? A shadow of `mmvq_kernel`.

    python bench/cuda_read_pattern.py [--out DIR]     (on a GPU)

For the Q4_K weight words of a Qwen3-8B matrix (N rows of K/8 int32 words) a kernel makes the same
loads as the per-thread matvec (`mmvq._part_q4k_t`: BN rows per one-warp program, NG 64-value groups
of 32 bytes per row per step, U steps per loop trip) and only sums them: "rows" reads the row-major
array as the matvec does (BN separate streams of NG * 32 bytes per step); "tiled" reads an array
whose row blocks are interleaved per group (a program's step is one contiguous BN * NG * 32 bytes).
The first cases add the matvec's other loads: its scale words, then its activation loads.
Timed like bench/cuda_read_ceiling.py (median of a replayed graph, copies rotated past the L2);
prints us and TB/s per (shape, layout, BN, NG, U).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
import triton
import triton.language as tl


@triton.jit
def _shadow(qw, sm4, dm, xq, xf, out, K8, BN: tl.constexpr, NG: tl.constexpr, U: tl.constexpr, TILED: tl.constexpr,
            MORE: tl.constexpr):
    """MORE 1: also the per-group scale words (sm4, (N, K/64)) and (d, dmin) words (dm, (N, K/256)) the
    matvec loads; 2: and the activation loads (xq words, xd and xs floats, shared by every program)."""
    pid = tl.program_id(0)
    r = (pid * BN + tl.arange(0, BN)).to(tl.int64)
    h = tl.arange(0, 2)
    w = tl.arange(0, 4)
    acc = tl.zeros([BN, NG, 2, 4], tl.int32)
    acc2 = tl.zeros([BN, NG, 2], tl.int32)
    for u0 in range(0, K8 // 8, NG * U):
        for j in tl.static_range(U):
            g = u0 + j * NG + tl.arange(0, NG)
            o4 = g[:, None, None] * 8 + h[None, :, None] * 4 + w[None, None, :]
            if TILED:
                blk = pid.to(tl.int64) * (BN * K8)
                off = blk + (g[None, :, None, None] * BN + (r - pid * BN)[:, None, None, None]) * 8 + \
                    (h[None, None, :, None] * 4 + w[None, None, None, :])
            else:
                off = r[:, None, None, None] * K8 + o4[None]
            acc += tl.load(qw + off)
            if MORE >= 1:
                g2 = g[:, None] + h[None, :] * 0
                r3 = r[:, None, None]
                acc2 += tl.load(sm4 + r3 * (K8 // 8) + g2[None]) + tl.load(dm + r3 * (K8 // 32) + (g2 // 4)[None])
            if MORE >= 2:
                xo = g[:, None, None] * 16 + h[None, :, None] * 4 + w[None, None, :]
                acc += tl.load(xq + xo)[None] + tl.load(xq + xo + 8)[None]
                g2 = g[:, None] + h[None, :] * 0
                f = tl.load(xf + g2 * 4) + tl.load(xf + g2 * 4 + 2) + tl.load(xf + g2 * 4 + 1) + tl.load(xf + g2 * 4 + 3)
                acc2 += f.to(tl.int32, bitcast=True)[None]
    tl.store(out + pid, tl.sum(tl.sum(tl.sum(tl.sum(acc, axis=3), axis=2), axis=1), axis=0) +
             tl.sum(tl.sum(tl.sum(acc2, axis=2), axis=1), axis=0))


# (BN, NG, U, tiled, MORE): the matvec's configurations (2, 8, 2) and (1, 16, 1) with its other loads added,
# then layouts and shapes of the weight words alone
CASES = [(2, 8, 2, False, 0), (2, 8, 2, False, 1), (2, 8, 2, False, 2), (1, 16, 1, False, 0), (1, 16, 1, False, 1),
         (1, 16, 1, False, 2)] + [(bn, ng, u, t, 0) for bn, ng, u in ((2, 8, 1), (2, 16, 1), (4, 8, 1), (2, 8, 4),
                                                                     (4, 8, 2), (8, 8, 1)) for t in (False, True)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path("."))
    a = ap.parse_args()
    rows = []
    for n, k in ((4096, 12288), (4096, 4096), (6144, 4096)):
        k8 = k // 8
        nw = n * k8
        copies = max(2, min(8, int(400e6 / (nw * 4))))
        xs = [torch.randint(0, 1 << 20, (nw,), dtype=torch.int32, device="cuda") for _ in range(copies)]
        scs = [torch.randint(0, 1 << 20, (n * k // 64 + n * k // 256,), dtype=torch.int32, device="cuda")
               for _ in range(copies)]
        xq = torch.randint(0, 1 << 20, (k // 4,), dtype=torch.int32, device="cuda")
        xf = torch.rand(k // 8, device="cuda")
        for bn, ng, u, tiled, more in CASES:
            out = torch.empty(n // bn, dtype=torch.int32, device="cuda")
            it = iter(range(1 << 30))

            def run():
                i = next(it) % copies
                _shadow[(n // bn,)](xs[i], scs[i], scs[i][n * k // 64:], xq, xf, out, k8, BN=bn, NG=ng, U=u,
                                    TILED=tiled, MORE=more, num_warps=1)
            run()
            with torch.cuda.stream(torch.cuda.Stream()):
                us = float(triton.testing.do_bench_cudagraph(run, rep=30, return_mode="median")) * 1e3
            mb = (nw + (n * k // 64 + n * k // 256 if more else 0)) * 4 / 1e6
            r = {"N": n, "K": k, "MB": mb, "layout": "tiled" if tiled else "rows", "BN": bn, "NG": ng,
                 "U": u, "more": ("qs", "qs+scales", "qs+scales+activations")[more], "us": us, "TBs": mb / us}
            rows.append(r)
            print(f"{n:5}x{k:<5} {mb:5.1f} MB  {r['layout']:5}  BN {bn} NG {ng:2} U {u}  {r['more']:22} {us:6.2f} us  "
                  f"{r['TBs']:.2f} TB/s", flush=True)
        del xs, scs
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "read-pattern.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
