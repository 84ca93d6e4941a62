"""The batched decode step's conv + delta rule (`kernels.recurrent.conv_delta_seqs`: B sequences, one token each, every
one on its own conv window and f32 delta-rule state) at Qwen3.5-35B-A3B's DeltaNet heads (16 k-heads, 32 v-heads of
128) over a grid of `recurrent.DELTA_SEQS` (state columns a program, warps): µs of the two launches replayed as a CUDA
graph, and the state bytes read and written a second, beside a plain copy of as many bytes (the ceiling). Each
configuration is checked against the first (the same states and inputs). JSON under --out.

    python bench/cuda_delta_seqs_bench.py [--seqs 64] [--configs 'bv,warps;...'] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import torch
from triton.testing import do_bench_cudagraph

from zinc.backends.cuda.kernels import recurrent as krec

HK, HV, S, K = 16, 32, 128, 4  # Qwen3.5-35B-A3B's DeltaNet
GRID = "16,4;16,2;32,4;32,8;64,4;64,8;128,8;128,16"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seqs", type=int, default=64)
    ap.add_argument("--configs", default=GRID)
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    a = ap.parse_args()
    dev, B = "cuda", a.seqs
    torch.manual_seed(0)
    C = 2 * HK * S + HV * S
    convs0 = torch.randn(B, K - 1, C, device=dev)
    ssms0 = torch.randn(B, HV, S, S, device=dev) * 0.1
    convs, ssms = convs0.clone(), ssms0.clone()
    table = torch.tensor([[convs[b].data_ptr(), ssms[b].data_ptr(), 0, 0] for b in range(B)], dtype=torch.int64,
                         device=dev)
    mixed = torch.randn(B, C + 512, device=dev)[:, :C]  # a column slice, as the stacked projections give it
    alpha, beta = torch.randn(B, HV, device=dev), torch.randn(B, HV, device=dev)
    w, dt_bias, a_log = torch.randn(C, K, device=dev) * 0.5, torch.randn(HV, device=dev), -torch.rand(HV, device=dev)
    state_bytes = 2 * ssms.numel() * 4  # read and written
    src, dst = torch.empty(ssms.numel(), device=dev), torch.empty(ssms.numel(), device=dev)
    copy_us = float(do_bench_cudagraph(lambda: dst.copy_(src), rep=30, return_mode="median")) * 1e3
    print(f"copy of the states' bytes: {copy_us:7.1f} us {state_bytes / copy_us / 1e6:5.2f} TB/s", flush=True)
    rows, want, cfg0 = [], None, krec.DELTA_SEQS

    def fn():
        return krec.conv_delta_seqs(mixed, alpha, beta, w, dt_bias, a_log, table, (HK, HV, S), 1e-6)
    for cfg in [tuple(map(int, c.split(","))) for c in a.configs.split(";")]:
        krec.DELTA_SEQS = cfg
        try:
            convs.copy_(convs0)
            ssms.copy_(ssms0)
            got = torch.cat([fn().reshape(-1), ssms.reshape(-1)])
            if want is None:
                want = got.clone()
            err = float((got - want).norm() / want.norm())
            us = float(do_bench_cudagraph(fn, rep=30, return_mode="median")) * 1e3
        except Exception as ex:  # noqa: BLE001 - a failing configuration is reported, the rest still run
            print(f"bv={cfg[0]} warps={cfg[1]}: {type(ex).__name__}: {ex}"[:200], flush=True)
            continue
        finally:
            krec.DELTA_SEQS = cfg0
        rows.append(dict(bv=cfg[0], warps=cfg[1], us=us, rel_err=err, TB_s=state_bytes / us / 1e6))
        print(f"bv={cfg[0]:3d} warps={cfg[1]:2d}: {us:7.1f} us {state_bytes / us / 1e6:5.2f} TB/s  err {err:.1e}",
              flush=True)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "delta-seqs.json").write_text(json.dumps({"device": torch.cuda.get_device_name(), "seqs": B,
                                                       "copy_us": copy_us, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
