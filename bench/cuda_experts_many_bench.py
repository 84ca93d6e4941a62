"""The selected experts' 8-bit matvecs of a batched decode step (many tokens: `mmvq.matvec_experts` over every
(token, expert) pair, launched expert by expert through `moe.expert_order`) at Qwen3.5-35B-A3B's expert shapes, over a
grid of configurations (`cfg` of `matvec_experts`: (BN, NG, warps) of `mmvq_experts_kernel`, or the 7-field
rows-as-streams form of kernels/mmvs.py), beside the grouped GEMM (`moe.experts_gemm` over `align_pairs` blocks).
The configurations in `mmvq.EXPERT_CONFIG` were measured at one and four tokens; 64 tokens give 512 pairs over ~220 of
256 experts. µs a call (median of a replayed CUDA graph of calls rotating over random id sets; the stacks are larger
than the L2), GB/s of the distinct experts' bytes; each row checked against the default configuration.

    python bench/cuda_experts_many_bench.py [--tokens 64] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np
import torch
import triton

from zinc.gguf.constants import GGMLType as T

CASES = [("gate_up", T.Q4_K, 512, 2048), ("down", T.Q4_K, 2048, 512), ("down", T.Q6_K, 2048, 512)]  # (proj, type, N, K)
E, NSEL = 256, 8
MMVQ = [(bn, ng, nw) for bn in (8, 16, 32, 64) for ng in (4, 8) for nw in (2, 4)] + [(64, 8, 8), (32, 8, 8)]
STREAMS = [(r, upt, nw, 1, 1, 2, 1) for r in (1, 2, 4) for upt in (1, 2) for nw in (1, 2, 4)]
IDSETS = 16


def stack(t, n, k, rng):
    from zinc.backends.base import QTensor
    from zinc.backends.cuda.weights import CudaWeight
    from zinc.gguf.quants import random_blocks

    return CudaWeight(QTensor("w", t, (E, n, k), random_blocks(t, E * n * k, rng, scale=0.05)), torch.device("cuda"))


def main() -> None:
    from zinc.backends.cuda.kernels import elementwise as kel
    from zinc.backends.cuda.kernels import moe as kmoe
    from zinc.backends.cuda.kernels import mmvq

    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    a = ap.parse_args()
    tok, rows = a.tokens, []
    rng = np.random.default_rng(0)
    idsets = [torch.from_numpy(np.stack([rng.choice(E, NSEL, replace=False) for _ in range(tok)]).astype(np.int32))
              .cuda() for _ in range(IDSETS)]
    orders = [kmoe.expert_order(i) for i in idsets]
    distinct = float(np.mean([len(torch.unique(i)) for i in idsets]))
    print(f"{tok} tokens: {tok * NSEL} pairs over {distinct:.1f} experts on average", flush=True)
    for proj, t, n, k in CASES:
        w = stack(t, n, k, rng)
        up = stack(t, n, k, rng) if proj == "gate_up" else None
        glu = (up.parts, kel.GLU_ACTS["silu"]) if up is not None else None
        x = torch.randn((tok if up is not None else tok * NSEL, k), device="cuda")
        xqt = mmvq.quantize_x(x)
        out = torch.empty((tok, NSEL, n), device="cuda")
        nbytes = distinct * w.nbytes / E * (2 if up is not None else 1)
        ctr = iter(range(1 << 40))

        def call(cfg, i=None):
            j = next(ctr) % IDSETS if i is None else i
            mmvq.matvec_experts(xqt, w.parts, int(t), n, k, idsets[j], out, glu=glu, cfg=cfg, order=orders[j])
            return out
        want = call(None, 0).clone()
        default = mmvq.interpreted(mmvq.expert_config(int(t), k, up is not None), n, xqt[0])
        for cfg in [None] + MMVQ + STREAMS:
            if cfg is not None and len(cfg) > 3 and up is not None and cfg[0] > 2:
                continue  # a GLU's streams take R <= 2
            try:
                err = float((call(cfg, 0) - want).norm() / want.norm())
                us = float(triton.testing.do_bench_cudagraph(lambda c=cfg: call(c), rep=20, return_mode="median")) * 1e3
            except Exception as ex:  # noqa: BLE001 - a variant that does not compile or launch
                print(f"{proj} {t.name} {cfg}: {type(ex).__name__}: {ex}"[:160], flush=True)
                continue
            rows.append(dict(proj=proj, type=t.name, kernel="pairs", cfg=cfg or default, default=cfg is None, us=us,
                             GBs=nbytes / us / 1e3, rel_err=err))

        def gemm(i=None):
            j = next(ctr) % IDSETS if i is None else i
            return kmoe.experts_gemm(x, w.parts, int(t), E, n, k, idsets[j], glu=glu)
        try:
            err = float((gemm(0) - want).norm() / want.norm())
            us = float(triton.testing.do_bench_cudagraph(gemm, rep=20, return_mode="median")) * 1e3
            rows.append(dict(proj=proj, type=t.name, kernel="grouped gemm", cfg=None, default=False, us=us,
                             GBs=nbytes / us / 1e3, rel_err=err))
        except Exception as ex:  # noqa: BLE001
            print(f"{proj} {t.name} gemm: {type(ex).__name__}: {ex}"[:160], flush=True)
        mine = sorted((r for r in rows if r["proj"] == proj and r["type"] == t.name), key=lambda r: r["us"])
        dflt = next(r for r in mine if r["default"])
        print(f"{proj:7} {t.name:5} default {str(dflt['cfg']):24} {dflt['us']:7.1f} us {dflt['GBs']:6.0f} GB/s",
              flush=True)
        for r in mine[:6]:
            print(f"        {r['kernel']:12} {str(r['cfg']):24} {r['us']:7.1f} us {r['GBs']:6.0f} GB/s "
                  f"err {r['rel_err']:.1e}", flush=True)
        del w, up
        torch.cuda.empty_cache()
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "experts-many.json").write_text(json.dumps({"device": torch.cuda.get_device_name(), "tokens": tok,
                                                         "distinct": distinct, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
