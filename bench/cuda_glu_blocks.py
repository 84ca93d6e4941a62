"""A prototype (not used by the backend yet): the Q4_K gate+up+GLU decode matvec writing its own 8-bit output.

    python bench/cuda_glu_blocks.py --small     # Triton's interpreter, tiny shapes, against the backend's kernels
    python bench/cuda_glu_blocks.py [--out DIR]  # GPU: check, then time against mmvs's GLU + quantize_x

Today a decode layer runs the GLU matvec (`mmvs`, two rows of gate and up a one-warp program) and then
`mmvq.quantize_x` on its output for the down projection: one launch of ~2 µs a layer, 36 a Qwen3-8B step. Fusing the
quantization through counters (the last program of a 32-row block quantizes it) lost twice (sessions 7 and 8: a
fence in every program). Here a program owns whole 32-row blocks instead: WR warps, each one doing what an mmvs
program does (32 / WR rows of gate and of up as streams, lanes over the 32-value units, 16-byte loads), so the
registers and occupancy per warp are mmvs's; at the end the block's 32 outputs meet in one tensor (a layout change
through shared memory, once) and are quantized like `quantize_kernel` (`mmvq.q8_store`). Its grid has 32 times
fewer programs of WR times the warps: for 12288 rows and WR 16, 384 programs of 16 warps. At 64 registers a
thread (mmvs's) two fit a multiprocessor, the same 1.45 waves of warps as mmvs's 6144 one-warp programs; offline
for sm_90 this kernel takes 77 (one a multiprocessor), or 64 with a cap and 32 bytes of stack (7 local loads and
5 stores in the loop). Its loop's loads are mmvs's (24 LDG, 4 of them 128-bit), with no shared memory, barriers
or shuffles.

The GPU run checks the f32 output and the 8-bit one (equal to quantize_x of the f32 output) and times, in a
replayed CUDA graph with weight copies rotated past the L2: mmvs GLU alone, mmvs GLU + quantize_x, and this kernel
(WR 16) with and without the 64-register cap (µs a call). JSON under --out. Checked in the interpreter (--small):
bit-equal to mmvs's GLU and the 8-bit output equal to quantize_x's, K with and without a partial last step.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

if "--small" in sys.argv:
    os.environ.setdefault("TRITON_INTERPRET", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
if "--small" in sys.argv:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    import conftest  # noqa: F401,E402  its Triton-interpreter patch (loop bounds read from tensors)
from cuda_mmvq_sweep import bench_us  # noqa: E402
from zinc.backends.cuda.kernels import mmvq, mmvs  # noqa: E402
from zinc.backends.cuda.kernels.dot4 import in_range  # noqa: E402
from zinc.backends.cuda.kernels.elementwise import glu_act  # noqa: E402


@triton.jit
def _w(qs, sm4, dm, rows, p, w, ok, K):
    """Q4_K words of rows (WR,) over units p (NP,): nibbles (WR, NP, 4), scale/min bytes and (d, dmin) (WR, NP)."""
    nsb = K // 256
    r = rows.to(tl.int64)
    W = tl.load(qs + r[:, None, None] * (nsb * 32) + p[None, :, None] * 4 + w[None, None, :],
                mask=ok[None, :, None], other=0)
    v = tl.load(sm4 + r[:, None] * (nsb * 4) + (p // 2)[None, :], mask=ok[None, :], other=0)
    dmw = tl.load(dm.to(tl.pointer_type(tl.int32), bitcast=True) + r[:, None] * nsb + (p // 8)[None, :],
                  mask=ok[None, :], other=0)
    return W, v, dmw


@triton.jit
def _dot(W, v, dmw, XL, XH, xdl, xdh, xsl, xsh, ASM: tl.constexpr):
    """`mmvs._q4k_dot` of rows (WR,) at once: (WR, NP) partial dots, the activations broadcast over the rows."""
    return mmvs._q4k_dot(W, v, dmw, XL[None, :, :], XH[None, :, :], xdl[None, :], xdh[None, :], xsl[None, :],
                         xsh[None, :], ASM)


@triton.jit
def glu_blocks_kernel(xq, xd, xs, out, gqs, gsm, gdm, uqs, usm, udm, oq, od, os_, N, K, WR: tl.constexpr,
                      ACT: tl.constexpr, ASM: tl.constexpr, EVEN: tl.constexpr):
    """grid (N / 32, T): rows 32 * pid + [0, 32) of out[t] = act(gate . x[t]) * (up . x[t]) (Q4_K, 8-bit x), and
    that block on 8 bits into (oq, od, os_) as `mmvq.quantize_kernel` writes it. Warp w: rows 32 pid + 2 w + {0, 1}
    (WR = 16) as streams; lanes over 32 units a step."""
    pid = tl.program_id(0)
    t = tl.program_id(1)
    xq, xd, xs = xq + t * (K // 4), xd + t * (K // 16), xs + t * (K // 16)
    units = K // 32
    wv = tl.arange(0, WR)
    r0 = pid * 32 + wv * (32 // WR)
    r1 = r0 + 1
    pr = tl.arange(0, 32)
    w = tl.arange(0, 4)
    g0 = tl.zeros([WR, 32], dtype=tl.float32)
    g1 = tl.zeros([WR, 32], dtype=tl.float32)
    u0_ = tl.zeros([WR, 32], dtype=tl.float32)
    u1_ = tl.zeros([WR, 32], dtype=tl.float32)
    for s in range(0, units, 32):
        p = s + pr
        ok = in_range(p, units, EVEN)
        Wg0, vg0, dg0 = _w(gqs, gsm, gdm, r0, p, w, ok, K)
        Wg1, vg1, dg1 = _w(gqs, gsm, gdm, r1, p, w, ok, K)
        Wu0, vu0, du0 = _w(uqs, usm, udm, r0, p, w, ok, K)
        Wu1, vu1, du1 = _w(uqs, usm, udm, r1, p, w, ok, K)
        g = p // 2
        h = p % 2
        xo = (g * 16 + h * 4)[:, None] + w[None, :]
        XL = tl.load(xq + xo, mask=ok[:, None], other=0)
        XH = tl.load(xq + xo + 8, mask=ok[:, None], other=0)
        xdl = tl.load(xd + g * 4, mask=ok, other=0.0)
        xdh = tl.load(xd + g * 4 + 2, mask=ok, other=0.0)
        xsl = tl.load(xs + g * 4 + h, mask=ok, other=0.0)
        xsh = tl.load(xs + g * 4 + 2 + h, mask=ok, other=0.0)
        g0 += _dot(Wg0, vg0, dg0, XL, XH, xdl, xdh, xsl, xsh, ASM)
        g1 += _dot(Wg1, vg1, dg1, XL, XH, xdl, xdh, xsl, xsh, ASM)
        u0_ += _dot(Wu0, vu0, du0, XL, XH, xdl, xdh, xsl, xsh, ASM)
        u1_ += _dot(Wu1, vu1, du1, XL, XH, xdl, xdh, xsl, xsh, ASM)
    y0 = glu_act(tl.sum(g0, axis=1), tl.sum(u0_, axis=1), ACT)  # (WR,) rows r0
    y1 = glu_act(tl.sum(g1, axis=1), tl.sum(u1_, axis=1), ACT)  # rows r1
    o = out + t * N
    tl.store(o + r0, y0)
    tl.store(o + r1, y1)
    blk = tl.reshape(tl.join(y0, y1), (32,))  # row 32 pid + 2 w + j at 2 w + j
    b = pid + tl.arange(0, 1)
    mmvq.q8_store(tl.reshape(blk, (1, 2, 4, 4)), b, t, N, b >= 0, oq, od, os_)


def glu_blocks(xqt, gate_parts, up_parts, n: int, k: int, out, wr: int = 16, act: int = 0, maxnreg: int = 0):
    """out (T, n) f32 and its 8-bit form (xq, xd, xs of `mmvq.q8_buffers(T, n)`), from Q4_K gate and up. maxnreg:
    a register cap (offline for sm_90 the kernel takes 77, one 16-warp program a multiprocessor; at 64 it keeps
    32 bytes of stack, two a multiprocessor)."""
    assert n % 32 == 0 and k % 256 == 0 and wr == 16, "WR 16: two rows a warp"
    xq, xd, xs = xqt
    t = xq.shape[0]
    q8 = mmvq.q8_buffers(t, n, xq.device)
    ga, gb, gc, _ = mmvq.words(gate_parts, 12, True)
    ua, ub, uc, _ = mmvq.words(up_parts, 12, True)
    glu_blocks_kernel[(n // 32, t)](xq, xd, xs, out, ga, gb, gc, ua, ub, uc, *q8, n, k, WR=wr, ACT=act,
                                    ASM=xq.is_cuda, EVEN=(k // 32) % 32 == 0, num_warps=wr, num_stages=1,
                                    **({"maxnreg": maxnreg} if maxnreg and xq.is_cuda else {}))
    return q8


def check(dev, shapes, t_rows) -> list[dict]:
    from zinc.backends.base import QTensor
    from zinc.backends.cuda.weights import CudaWeight
    from zinc.gguf.constants import GGMLType
    from zinc.gguf.quants import random_blocks

    rows = []
    for n, k in shapes:
        for t in t_rows:
            rng = np.random.default_rng(n + k + t)
            g, u = (CudaWeight(QTensor(f"w{i}", GGMLType.Q4_K, (n, k), random_blocks(GGMLType.Q4_K, n * k, rng,
                                                                                     scale=0.05)), dev)
                    for i in range(2))
            x = torch.from_numpy(rng.standard_normal((t, k)).astype(np.float32)).to(dev)
            xqt = mmvq.quantize_x(x)
            want = torch.empty((t, n), device=dev)
            mmvq.matvec(xqt, g.parts, 12, n, k, want, glu=(u.parts, 0))
            got = torch.empty((t, n), device=dev)
            q8 = glu_blocks(xqt, g.parts, u.parts, n, k, got)
            rel = float((got - want).abs().max() / want.abs().max())
            ref8 = mmvq.quantize_x(got)
            same8 = all(torch.equal(a.cpu(), b.cpu()) for a, b in zip(q8, ref8))
            rows.append({"N": n, "K": k, "T": t, "rel_vs_mmvs": rel, "q8_equal": same8})
            print(f"{n}x{k} T{t}: max |got - mmvs| / max {rel:.1e}, 8-bit output {'equal' if same8 else 'DIFFERS'}",
                  flush=True)
            assert rel < 1e-5 and same8
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.small:
        check(torch.device("cpu"), [(64, 1024), (96, 1280)], (1, 2))
        return
    dev = torch.device("cuda")
    res = {"check": check(dev, [(12288, 4096), (4096, 4096), (1024, 2048)], (1, 3))}
    from zinc.backends.base import QTensor
    from zinc.backends.cuda.weights import CudaWeight
    from zinc.gguf.constants import GGMLType
    from zinc.gguf.quants import random_blocks

    n, k = 12288, 4096
    rng = np.random.default_rng(0)
    qts = [QTensor(f"w{i}", GGMLType.Q4_K, (n, k), random_blocks(GGMLType.Q4_K, n * k, rng, scale=0.05))
           for i in range(2)]
    copies = 6
    ws = [[CudaWeight(q, dev) for q in qts] for _ in range(copies)]
    xqt = mmvq.quantize_x(torch.randn((1, k), device=dev))
    y = torch.empty((1, n), device=dev)
    it = iter(range(1 << 30))

    def mmvs_glu():
        w = ws[next(it) % copies]
        mmvq.matvec(xqt, w[0].parts, 12, n, k, y, glu=(w[1].parts, 0))

    def mmvs_glu_q():
        w = ws[next(it) % copies]
        mmvq.matvec(xqt, w[0].parts, 12, n, k, y, glu=(w[1].parts, 0))
        mmvq.quantize_x(y)

    def blocks(cap=0):
        w = ws[next(it) % copies]
        glu_blocks(xqt, w[0].parts, w[1].parts, n, k, y, maxnreg=cap)

    times = {}
    for name, fn in (("mmvs GLU", mmvs_glu), ("mmvs GLU + quantize_x", mmvs_glu_q), ("blocks WR 16", blocks),
                     ("blocks WR 16, 64 regs", lambda: blocks(64))) * 2:
        times.setdefault(name, []).append(bench_us(fn, 50))
    for name, v in times.items():
        print(f"{name:24} {min(v):7.2f} us  ({', '.join(f'{x:.2f}' for x in v)})")
    res["us"] = times
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        (Path(a.out) / "glu-blocks.json").write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
