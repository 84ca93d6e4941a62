"""Decode attention splits on a GPU: time (nsplit, cells per step) at 4096 / 16384 cells (graph-replayed),
set `ops.ATTN_SPLITS` to the best, then run the depth benches with it: `python bench/cuda_attn_sweep.py MODEL OUT`."""

import json
import sys

import torch
import triton

from zinc.backends.cuda import ops as cops
from zinc.backends.cuda.kernels import attention as kattn

model, out = sys.argv[1], sys.argv[2]
dev = torch.device("cuda")
best = {}
for cells, cands in ((4096, [(32, 16), (64, 16), (32, 32), (64, 32), (128, 16), (128, 32)]),
                     (16384, [(64, 16), (128, 16), (64, 32), (128, 32), (256, 16), (256, 32), (64, 64), (128, 64)])):
    q = torch.randn((1, 32, 128), device=dev)
    k = torch.randn((cells, 8, 128), device=dev).half()
    v = torch.randn((cells, 8, 128), device=dev).half()
    kp = torch.arange(cells, dtype=torch.int32, device=dev)
    qp = torch.tensor([cells - 1], dtype=torch.int32, device=dev)
    ref = None
    for ns, bs in cands:
        o = torch.empty((1, 32, 128), device=dev)
        scr = (torch.empty(32 * ns, device=dev), torch.empty(32 * ns, device=dev), torch.empty((32 * ns, 128), device=dev))
        fn = lambda: kattn.decode_attention(q, k, v, qp, kp, cells, 0.088, 0, 0.0, None, scr, o, nsplit=ns, bs=bs)
        fn()
        ref = o.clone() if ref is None else ref
        err = float((o - ref).norm() / ref.norm())
        with torch.cuda.stream(torch.cuda.Stream()):
            us = triton.testing.do_bench_cudagraph(fn, rep=40) * 1e3
        print(f"cells {cells} nsplit {ns} bs {bs}: {us:.1f} us/layer  rel diff {err:.1e}", flush=True)
        if err < 1e-4 and us < best.get(cells, (1e9,))[0]:
            best[cells] = (us, ns, bs)
print("best", best)
cops.ATTN_SPLITS[1] = (8192, best[4096][1], best[4096][2])
cops.ATTN_SPLITS[2] = (1 << 62, best[16384][1], best[16384][2])
print("ATTN_SPLITS", cops.ATTN_SPLITS, flush=True)
from zinc.cli import main  # noqa: E402  the depth benches with the chosen splits
sys.argv = ["zinc", "bench", "-m", model, "--backend", "cuda", "-p", "0", "-n", "128", "-d", "4096,16384", "-r", "2",
            "--json"]
with open(out, "w") as f:
    sys.stdout = f
    main(sys.argv[1:])
