"""Vulkan one-token decode attention: the split form (attention_split + attn_combine) against the one
workgroup per query head kernel (attention.wgsl), at Qwen3-8B's heads (Hq 32, Hkv 8, Dh 128).

`PYTHONPATH=src python3 bench/vulkan_attn_check.py` on a GPU (`--allow-cpu` also takes lavapipe, where
only the check runs when timestamps are missing). For each extent n_kv (a cache of max(n_kv, --cells)
cells, the new token's cell the last in use) and each form, with and without the fused
rope_qk_kv_write prologue (q/k norms + rope + the cache write, as decode runs it): the output is
compared with the NumPy backend, then the attention dispatches are timed with GPU timestamps (the mean
of --reps calls; the split form's time is both dispatches). Prints a table; writes the rows as JSON to
$OUT/vulkan_attn_check.json when OUT is set (or to --json).
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np

from zinc.backends.base import RopeParams
from zinc.backends.cpu import CpuOps
from zinc.backends.vulkan import attention
from zinc.backends.vulkan.attention import head_groups, n_split
from zinc.backends.vulkan.ops import VulkanOps

HQ, HKV, DH = 32, 8, 128
SCALE = 1.0 / np.sqrt(DH)
TOL = 2e-5  # normalized max error against NumPy


def _err(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(np.asarray(a, np.float64) - b).max() / max(np.abs(b).max(), 1e-30))


def run_case(ops: VulkanOps, cpu: CpuOps, n_kv: int, S: int, reps: int, timed: bool) -> list[dict]:
    rng = np.random.default_rng(n_kv)
    rand = lambda *s: rng.standard_normal(s, dtype=np.float32)  # noqa: E731
    p = RopeParams(n_dims=DH, mode="neox", freq_base=1000000.0)
    q, k, v, qn, kn = rand(1, HQ, DH), rand(1, HKV, DH), rand(1, HKV, DH), rand(DH), rand(DH)
    ck, cv = rand(S, HKV, DH), rand(S, HKV, DH)
    cp = np.where(np.arange(S) < n_kv, np.arange(S), -1).astype(np.int32)
    pos = slots = np.array([n_kv - 1], np.int32)
    cache = [ck.copy(), cv.copy(), cp.copy()]
    rq = cpu.rope(cpu.rms_norm(q, qn, 1e-6), pos, p)
    cpu.rope_kv_write(cpu.rms_norm(k, kn, 1e-6), v, pos, p, None, *cache, slots)
    refs = {True: cpu.attention(rq, *cache[:2], pos, cache[2], n_kv, SCALE),
            False: cpu.attention(q, ck, cv, pos, cp, n_kv, SCALE)}
    V = ops.from_numpy
    vq, vk_, vv, vqn, vkn, vpos, vslots = (V(a) for a in (q, k, v, qn, kn, pos, slots))
    rows = []
    for fuse in (True, False):
        for split in (False, True):
            ops.split_attention = split
            vc = [V(a) for a in (ck, cv, cp)]

            def call() -> object:
                x = vq
                if fuse:
                    x = ops.rope_qk_kv_write(vq, vk_, vv, vpos, p, None, *vc, vslots, q_norm=vqn, k_norm=vkn, eps=1e-6)
                return ops.attention(x, vc[0], vc[1], vpos, vc[2], n_kv, SCALE)
            err = _err(ops.to_numpy(call()), refs[fuse])
            us, per = float("nan"), {}
            if timed:
                for _ in range(3):
                    call()
                ops.dev.flush()
                ops.dev.start_profile()
                for _ in range(reps):
                    call()
                prof = ops.dev.stop_profile()
                us = sum(prof["ns"].values()) / reps / 1e3
                per = {name: round(ns / reps / 1e3, 2) for name, ns in prof["ns"].items()}
            rows.append({"n_kv": n_kv, "cells": S, "splits": n_split(S) if split else 1, "fused": fuse,
                         "form": "split" if split else "old", "us": us, "per_dispatch_us": per, "err": err,
                         "ok": err <= TOL})
    ops.split_attention = True
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-kv", type=int, nargs="*", default=[64, 512, 4096, 16384])
    ap.add_argument("--cells", type=int, default=0, help="cache cells at least (default: n_kv)")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--allow-cpu", action="store_true", help="take a CPU adapter (lavapipe) too")
    ap.add_argument("--split-cells", type=int, default=0, help="cells per split (attention.SPLIT_CELLS)")
    ap.add_argument("--no-q8", action="store_true", help="f32 attention output only (matvec_q8=False)")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    if a.split_cells:
        attention.SPLIT_CELLS = a.split_cells
    ops = VulkanOps(allow_cpu_adapter=a.allow_cpu, replay=False, matvec_q8=not a.no_q8)
    timed = "timestamp-query-inside-passes" in ops.dev.features
    cpu = CpuOps()
    print(f"adapter {ops.device_name}; Hq {HQ} Hkv {HKV} Dh {DH}; pass-1 workgroups per kv head and split: "
          f"{head_groups(HQ // HKV)}; "
          f"timed: {timed} ({a.reps} calls)")
    print(f"{'n_kv':>6} {'cells':>6} {'NS':>3} {'fused':>5} {'old us':>8} {'split us':>9} {'speedup':>7}  "
          f"{'err old':>8} {'err split':>9}  split dispatches (us)")
    rows, bad = [], 0
    for n_kv in a.n_kv:
        res = run_case(ops, cpu, n_kv, max(n_kv, a.cells), a.reps, timed)
        rows += res
        for fuse in (True, False):
            old, new = (next(r for r in res if r["fused"] == fuse and r["form"] == f) for f in ("old", "split"))
            bad += (not old["ok"]) + (not new["ok"])
            print(f"{n_kv:6d} {new['cells']:6d} {new['splits']:3d} {str(fuse):>5} {old['us']:8.1f} {new['us']:9.1f} "
                  f"{old['us'] / new['us']:7.2f}  {old['err']:8.1e} {new['err']:9.1e}  {new['per_dispatch_us']}",
                  flush=True)
    path = a.json or (os.path.join(os.environ["OUT"], "vulkan_attn_check.json") if os.environ.get("OUT") else None)
    if path:
        with open(path, "w") as f:
            json.dump({"adapter": ops.device_name, "rows": rows}, f, indent=1)
    print("all outputs within tolerance" if not bad else f"{bad} outputs OUT OF TOLERANCE ({TOL})")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
