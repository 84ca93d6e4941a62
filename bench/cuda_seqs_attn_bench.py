"""The batched decode attention (`kernels.seqs.attention_seqs`: B sequences, one new token each, every one over its
own f16 cache) at Qwen3-8B's heads over a grid of (cells a step, pipeline stages, warps, splits): µs of the rope and
split launches (and the combine past one split) replayed as a CUDA graph, and the K + V bytes read a second. Each
configuration is first checked against the default one (the same caches and inputs). JSON under --out.

    python bench/cuda_seqs_attn_bench.py [--seqs 64] [--depths 128,1024,4096] [--configs 'bs,stages,warps,splits;...']
        [--out DIR]

splits 0: `seq_splits` of the cache size (today's choice); a cache holds depth + 56 cells, as
`bench/cuda_step_profile.py` sizes them.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import torch
from triton.testing import do_bench_cudagraph

from zinc.backends.cuda.kernels import seqs as kseqs

HQ, HKV, D = 32, 8, 128  # Qwen3-8B
GRID = "64,3,4,0;32,3,4,0;64,2,4,0;32,2,4,0;128,2,4,0;64,3,8,0;64,3,4,2;32,2,4,2;64,3,4,4"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seqs", type=int, default=64)
    ap.add_argument("--depths", default="128,1024,4096")
    ap.add_argument("--configs", default=GRID)
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    a = ap.parse_args()
    dev, B = "cuda", a.seqs
    torch.manual_seed(0)
    cfgs = [tuple(map(int, c.split(","))) for c in a.configs.split(";")]
    rows = []
    tiles0 = kseqs.tiles
    for depth in map(int, a.depths.split(",")):
        size = depth + 56
        caches = [(torch.randn(size, HKV, D, device=dev).half(), torch.randn(size, HKV, D, device=dev).half(),
                   torch.where(torch.arange(size, device=dev) < depth, torch.arange(size, device=dev), -1)
                   .to(torch.int32)) for _ in range(B)]
        table = torch.tensor([kseqs.table_row(*c) for c in caches], dtype=torch.int64, device=dev)
        q, k, v = (torch.randn(B, h, D, device=dev) for h in (HQ, HKV, HKV))
        pos = torch.full((B,), depth, dtype=torch.int32, device=dev)
        c = 1e4 ** (-torch.arange(0, D, 2, device=dev).float() / D)
        kv_bytes = B * HKV * (depth + 1) * D * 2 * 2
        want = None
        for bs, stages, warps, splits in cfgs:
            def patched(r, d, dv, bs0, st0, w0, esize, bs=bs, stages=stages, warps=warps):
                bm, _, _, _ = tiles0(r, d, dv, bs0, st0, w0, esize)
                return bm, bs, stages, warps

            def fn(splits=splits):
                return kseqs.attention_seqs(q, k, v, pos, table, True, c, 1.0, D, True, D ** -0.5,
                                            nsplit=splits or kseqs.seq_splits(size), max_cells=size)
            kseqs.tiles = patched
            try:
                got = fn()
                if want is None:
                    want = got.clone()
                err = float((got - want).norm() / want.norm())
                us = float(do_bench_cudagraph(fn, rep=30, return_mode="median")) * 1e3
            except Exception as ex:  # noqa: BLE001 - a failing configuration is reported, the rest still run
                print(f"depth {depth} bs={bs} stages={stages} warps={warps} splits={splits}: "
                      f"{type(ex).__name__}: {ex}"[:200], flush=True)
                continue
            finally:
                kseqs.tiles = tiles0
            rows.append(dict(depth=depth, bs=bs, stages=stages, warps=warps, splits=splits, us=us, rel_err=err,
                             TB_s=kv_bytes / us / 1e6))
            print(f"depth {depth:5d} bs={bs:3d} stages={stages} warps={warps} splits={splits:2d}: {us:7.1f} us "
                  f"{kv_bytes / us / 1e6:5.2f} TB/s  err {err:.1e}", flush=True)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "seqs-attn.json").write_text(json.dumps({"device": torch.cuda.get_device_name(), "seqs": B,
                                                      "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
