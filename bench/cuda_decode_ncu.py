"""Run a decode layer's small kernels a few times, for Nsight Compute to profile (`ncu ... python3 THIS`).

    ncu --clock-control none -k regex:'attn|quantize|mmvs' --launch-skip 6 -o REPORT python3 bench/cuda_decode_ncu.py

Qwen3-8B's shapes, one token: the decode attention with the rope (8 splits over a 128-cell cache, 100 cells in use;
32 splits over 16,512 cells), `norm_quantize` of a 4096 row with its residual, and the O projection's matvec
(Q4_K 4096 x 4096 on 8-bit activations). Each runs 3 times (the first compile). No output but a line.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from zinc.backends.cuda.kernels import attention as kattn  # noqa: E402
from zinc.backends.cuda.kernels import mmvq  # noqa: E402
from zinc.backends.cuda.ops import ATTN_CLUSTER, WIDE_BANDWIDTH, CudaOps, attention_config, peak_bandwidth  # noqa: E402
from zinc.gguf.constants import GGMLType  # noqa: E402
from zinc.testing.compare import random_weight  # noqa: E402


def main() -> int:
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(0)
    r = lambda *s: torch.randn(*s, device=dev, generator=g)  # noqa: E731
    Hq, Hk, D = 32, 8, 128
    c = torch.pow(1e6, -torch.arange(0, 64, device=dev, dtype=torch.float32) / 64)
    for S, n in ((128, 100), (16512, 16448)):
        ns, bs, stages, warps = attention_config(S, peak_bandwidth(dev) >= WIDE_BANDWIDTH)  # as the backend runs it
        q, k, v, qw, kw = r(1, Hq, D), r(1, Hk, D), r(1, Hk, D), r(D), r(D)
        ck, cv = r(S, Hk, D).half(), r(S, Hk, D).half()
        cp = torch.full((S,), -1, dtype=torch.int32, device=dev)
        cp[:n] = torch.arange(n, device=dev, dtype=torch.int32)
        pos = torch.tensor([n], dtype=torch.int32, device=dev)
        out = torch.empty((1, Hq, D), device=dev)
        q8 = mmvq.q8_buffers(1, Hq * D, dev)
        scratch = (torch.empty(Hq * ns, device=dev), torch.empty(Hq * ns, device=dev),
                   torch.empty((Hq * ns, D), device=dev))
        for _ in range(3):
            kattn.decode_attention(q, ck, cv, pos, cp, S, 0.088, 0, 0.0, None, scratch, out, nsplit=ns, bs=bs,
                                   stages=stages, warps=warps, exact=False, q8=q8, cluster=ATTN_CLUSTER,
                                   rope=(qw, k, kw, v, c, None, 1e-6, 1.0, D, True, True))
    x, res, w = r(1, 4096), r(1, 4096), r(4096)
    o, s = torch.empty_like(x), torch.empty_like(x)
    for _ in range(3):
        xq = mmvq.norm_quantize(x, w, 1e-6, o, res=res, sum_out=s)
    ops = CudaOps()
    wo = ops.upload(random_weight(GGMLType.Q4_K, (4096, 4096), 3))
    y = torch.empty((1, 4096), device=dev)
    for _ in range(3):
        mmvq.matvec(xq, wo.parts, int(wo.ggml_type), 4096, 4096, y)
    torch.cuda.synchronize()
    print("done", torch.cuda.get_device_name())
    return 0


if __name__ == "__main__":
    sys.exit(main())
