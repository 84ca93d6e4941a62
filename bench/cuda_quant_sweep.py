"""Time the activation-quantization launches of a decode step per configuration (`kernels.mmvq`).

    python bench/cuda_quant_sweep.py [--out DIR]     (on a GPU)

The RMS norm + residual + 8-bit quantization (`norm_quantize`, Qwen3-8B's 4096-wide rows) and the
plain quantization of a GLU output (`quantize_x`, 12288 wide) per (blocks per program, warps): each
output first checked bit-for-bit against the default configuration's, then timed as the median of a
replayed CUDA graph of 64 chained calls (what a decode step's graph holds), per call; and an empty
one-program kernel the same way (the fixed cost of a launch in a graph). Prints a line per result,
the best last; writes DIR/quant-sweep.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
import triton

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from zinc.backends.cuda.kernels import mmvq  # noqa: E402

CHAIN = 64


@triton.jit
def _empty(x):
    pass


def graph_us(fn) -> float:
    """Per-call GPU time of CHAIN calls of fn captured in one graph (launch gaps included)."""
    fn()
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        fn()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=s):
            for _ in range(CHAIN):
                fn()
    times = []
    for _ in range(20):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) * 1e3 / CHAIN)
    return sorted(times)[len(times) // 2]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path("."))
    a = ap.parse_args()
    dev = torch.device("cuda")
    res = []
    one = torch.zeros(1, device=dev)
    us = graph_us(lambda: _empty[(1,)](one))
    res.append({"op": "empty kernel", "us": us})
    print(f"an empty one-program kernel: {us:.2f} us per launch in a graph", flush=True)
    k = 4096
    x, r, w = (torch.randn((1, k), device=dev) for _ in range(3))
    s, out = torch.empty_like(x), torch.empty_like(x)
    ref = mmvq.norm_quantize(x, w, 1e-6, out, res=r, sum_out=s)
    for nb in (1, 2, 4, 8, 16, 32, 64, 128):
        for nw in (1, 2, 4, 8, 16):
            if nb < nw:  # fewer blocks of 32 than threads
                continue
            got = mmvq.norm_quantize(x, w, 1e-6, out, res=r, sum_out=s, cfg=(nb, nw))
            same = all(torch.equal(p, q) for p, q in zip(got, ref))
            us = graph_us(lambda nb=nb, nw=nw: mmvq.norm_quantize(x, w, 1e-6, out, res=r, sum_out=s, cfg=(nb, nw)))
            res.append({"op": "norm_quantize", "K": k, "nb": nb, "warps": nw, "us": us, "same": same})
            print(f"norm_quantize K {k}  nb {nb:3}  warps {nw:2}  {us:6.2f} us  {'ok' if same else 'DIFFERENT'}",
                  flush=True)
    k = 12288
    x = torch.randn((1, k), device=dev)
    ref = mmvq.quantize_x(x)
    for nb in (2, 4, 8, 16, 32):
        for nw in (1, 2, 4, 8):
            kern = lambda nb=nb, nw=nw: mmvq.quantize_kernel[(triton.cdiv(k // 32, nb), 1)](  # noqa: E731
                x, x, x, x, x, *bufs, k, 0.0, NB=nb, NORM=False, HAS_W=False, HAS_RES=False, KP=1, num_warps=nw)
            bufs = mmvq.q8_buffers(1, k, dev)
            kern()
            same = all(torch.equal(p, q) for p, q in zip(bufs, ref))
            us = graph_us(kern)
            res.append({"op": "quantize_x", "K": k, "nb": nb, "warps": nw, "us": us, "same": same})
            print(f"quantize_x    K {k} nb {nb:3}  warps {nw:2}  {us:6.2f} us  {'ok' if same else 'DIFFERENT'}",
                  flush=True)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "quant-sweep.json").write_text(json.dumps({"gpu": torch.cuda.get_device_name(), "results": res}, indent=1))
    for op in ("norm_quantize", "quantize_x"):
        ok = [r for r in res if r["op"] == op and r["same"]]
        b = min(ok, key=lambda r: r["us"])
        print(f"best {op}: nb {b['nb']} warps {b['warps']} {b['us']:.2f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
