"""Sweep the tile configurations and variants of the 8-bit-activation decode matvec (`kernels.mmvq`).

`python bench/cuda_mmvq_sweep.py --out DIR` (on a GPU): for each Qwen3-8B decode weight shape (the
fused QKV 6144x4096, O 4096x4096, gate+up+GLU 2 x 12288x4096 in one kernel, down 4096x12288 as Q4_K
and Q6_K, lm_head 151936x4096 Q6_K, and the separate K/V 1024x4096), checks every configuration
against float64 math on the same quantized activations, times it (median of a replayed CUDA graph,
weight copies rotated past the L2) next to the others, writes DIR/mmvq-sweep.json and prints a table:
per shape the default (`mmvq.config`), the best first-form (V 0) and the best configuration, us, TB/s (weight
bytes / time), rel err; last the best configuration per shape.

A configuration is (BN, NG, num_warps, KS[, num_stages]) of `mmvq.mmvq_kernel` (V 0), or for Q4_K and Q6_K
(R, units per thread, num_warps, 1, 1, 2, U) of the rows-as-streams form (V 2, `kernels/mmvs.py`: R rows a
program, the loop unrolled U times; `--variants v2` sweeps VAR2). The per-thread form V 1 of earlier sweeps is
gone (V 2 was faster on every shape: bench/results/2026-12-01-cuda-mmvq-sweep-v8-streams.json).

`python bench/cuda_mmvq_sweep.py --sass` (no GPU needed: Triton's offline compiler for sm_90 and
the bundled nvdisasm) prints, per configuration, registers, the loop's SASS instructions per weight
byte (one warp's instructions times the warps, over the bytes one loop step reads), its loads by
width, shuffles and barriers.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

Q4K, Q6K, Q80 = 12, 14, 8
# (type, N, K, glu): the Qwen3-8B Q4_K_M decode matvecs
SHAPES = [(Q4K, 6144, 4096, False), (Q4K, 5120, 4096, False), (Q4K, 4096, 4096, False), (Q4K, 12288, 4096, True),
          (Q4K, 12288, 4096, False), (Q4K, 4096, 12288, False), (Q6K, 4096, 12288, False), (Q80, 4096, 4096, False),
          (Q4K, 1024, 4096, False), (Q6K, 1024, 4096, False), (Q6K, 151936, 4096, False)]
# the earlier sweep's best few V 0 configurations (bench/results/2026-11-30-cuda-mmvq-sweep.json)
BASE = [(1, 16, 1, 1), (1, 32, 1, 1), (1, 64, 1, 1), (2, 16, 1, 1), (1, 64, 4, 1), (2, 64, 4, 1), (4, 32, 4, 1),
        (4, 16, 4, 1)]
# rows as streams (V 2, kernels/mmvs.py): (R, units per thread, warps, 1, stages, 2, U)
VAR2 = [(r, upt, nw, 1, 1, 2, u) for r in (1, 2, 4) for nw in (1, 2, 4) for upt in (1, 2) for u in (1, 2)] + [
    (r, 4, 1, 1, 1, 2, 1) for r in (1, 2, 4)]
BPU = {Q4K: 36.5, Q6K: 52.5, Q80: 34.0}  # weight bytes per loop unit (64 values; Q8_0 32)


def variants_for(qtype: int, given) -> list[tuple]:
    if given == ["v2"]:
        return VAR2 if qtype in (Q4K, Q6K) else []
    if given:
        return [v for v in given if len(v) < 6 or v[5] == 0 or qtype in (Q4K, Q6K)]
    return BASE + (VAR2 if qtype in (Q4K, Q6K) else [])


def sm90_listing(fn, sig: dict, const: dict, aligned, warps: int, stages: int) -> tuple[str, str]:
    """Triton kernel fn compiled offline for sm_90 (sig: argument types, const: constexpr values, aligned: indices of
    the arguments Triton's launcher would specialize as multiples of 16) -> (its SASS by nvdisasm, its resource usage
    by cuobjdump); the other offline SASS tools (cuda_kvq8_sass.py, cuda_attn_sass.py) take it too."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    sig = {**sig, **{n: "constexpr" for n in const}}
    k = triton.compile(ASTSource(fn, sig, constexprs=const, attrs={(i,): [["tt.divisibility", 16]] for i in aligned}),
                       target=GPUTarget("cuda", 90, 32), options=dict(num_warps=warps, num_stages=stages))
    bind = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(k.asm["cubin"])
    try:
        sass = subprocess.run([f"{bind}/nvdisasm", "-c", f.name], capture_output=True, text=True).stdout
        res = subprocess.run([f"{bind}/cuobjdump", "-res-usage", f.name], capture_output=True, text=True).stdout
    finally:
        os.unlink(f.name)
    return sass, res


def sass_report(cfgs: list[tuple], shapes=((Q4K, False), (Q4K, True), (Q6K, False), (Q80, False))) -> None:
    """Offline: registers and the loop's SASS per weight byte of `mmvq_kernel` (sm_90, K a multiple of 16)."""
    from zinc.backends.cuda.kernels import mmvq, mmvs
    wt = {Q4K: ["*i32", "*i32", "*fp16", "*fp16"], Q6K: ["*i32", "*i32", "*i8", "*fp16"],
          Q80: ["*i32", "*fp16", "*fp16", "*fp16"]}
    names = ["xq", "xd", "xs", "out", "a", "b", "c", "d", "a2", "b2", "c2", "d2", "N", "K", "so"]
    print(f"{'type':5} {'glu':3} {'cfg':22} {'regs':>4} {'loop':>4} {'ins/B':>6} {'shfl':>4} {'bar':>3}  loads")
    for qt, glu in shapes:
        for cfg in variants_for(qt, cfgs):
            bn, ng, nw, ks, *st = cfg
            v2 = len(st) > 1 and st[1] == 2
            u = st[2] if v2 and len(st) > 2 else 1
            types = wt[qt] if not (v2 and qt == Q6K) else ["*i32", "*i32", "*i32", "*fp16"]  # Q6_K V 2 reads sc4
            sig = dict(zip(names, ["*i32", "*fp32", "*fp32", "*fp32"] + types + types + ["i32"] * 3))
            if v2:  # mmvs_kernel also takes the expert ids (after the weights) and XDIV, ES, UO (after so)
                sig = dict(zip(names[:12] + ["ids"] + names[12:] + ["XDIV", "ES", "UO", "P1", "N2", "out2", "so2"],
                               list(sig.values())[:12] + ["*i32"] + ["i32"] * 8 + ["*fp32", "i32"]))
                fn, const = mmvs.mmvs_kernel, dict(QT=qt, R=bn, NP=32 * nw * ng, ASM=True, EVEN=True,
                                                     ACT=0 if glu else -1, U=u, EXPERTS=False, QT2=0, R2=1,
                                                     NP2=32, EVEN2=False, U2=1)
            else:
                fn, const = mmvq.mmvq_kernel, dict(QT=qt, BN=bn, NG=ng, KS=ks, ASM=True, EVEN=True,
                                                     ACT=0 if glu else -1)
            try:
                sass, res = sm90_listing(fn, sig, const, range(15), nw, st[0] if st else 3)
            except Exception as e:  # noqa: BLE001
                print(f"{qt:5} {glu:3} {cfg!s:22} failed: {repr(e)[:100]}")
                continue
            ops, labels, pend = [], {}, []
            for line in sass.splitlines():
                m = re.match(r"\s*(\.L_x_\d+):", line)
                if m:
                    pend.append(m.group(1))
                m = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z0-9_.]+)", line)
                if m:
                    a = int(m.group(1), 16)
                    labels.update({p: a for p in pend})
                    pend = []
                    ops.append((a, m.group(3), line))
            loops = [(labels[m.group(1)], a) for a, op, line in ops if op.startswith("BRA")
                     for m in [re.search(r"(\.L_x_\d+)", line)] if m and labels.get(m.group(1), 1 << 40) < a]
            lo, hi = max(loops, key=lambda p: p[1] - p[0]) if loops else (0, -1)
            body = [op for a, op, _ in ops if lo <= a <= hi]
            c = collections.Counter(op.split(".")[0] for op in body)
            ldg = collections.Counter(op for op in body if op.startswith("LDG"))
            regs = re.search(r"REG:(\d+)", res)
            stack = re.search(r"STACK:(\d+)", res)
            per_step = 32 * nw * ng * (16 if qt == Q4K else 48) * 37 / 32 if v2 else ng * BPU[qt]  # weight bytes
            nbytes = bn * u * per_step * (2 if glu else 1)
            print(f"{qt:5} {glu:3d} {cfg!s:22} {regs.group(1) if regs else '?':>4} {len(body):4d} "
                  f"{len(body) * nw / nbytes:6.3f} {c['SHFL']:4d} {c['BAR']:3d}  "
                  f"{dict(ldg)}{' stack ' + stack.group(1) if stack and stack.group(1) != '0' else ''}", flush=True)


def bench_us(fn, rep: int = 25) -> float:
    """GPU µs of one call (median of a replayed CUDA graph of many calls, rep ms of them: no host launch cost in
    it); the other CUDA bench scripts time with it too."""
    import torch
    import triton
    with torch.cuda.stream(torch.cuda.Stream()):
        return float(triton.testing.do_bench_cudagraph(fn, rep=rep, return_mode="median")) * 1e3


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path("."))
    ap.add_argument("--shapes", default="", help="e.g. Q4_K:12288x4096,Q4_K:12288x4096:glu")
    ap.add_argument("--variants", default="", help="e.g. 4,8,4,1;1,16,1,1,3,1, or v2 (VAR2)")
    ap.add_argument("--sass", action="store_true", help="offline: registers and SASS per byte, no GPU")
    args = ap.parse_args()
    given = (["v2"] if args.variants == "v2" else
             [tuple(int(v) for v in s.split(",")) for s in args.variants.split(";")] if args.variants else [])
    if args.sass:
        sass_report(given)
        return 0
    import torch

    from zinc.backends.base import QTensor
    from zinc.backends.cuda.kernels import mmvq
    from zinc.backends.cuda.kernels.elementwise import GLU_ACTS
    from zinc.backends.cuda.weights import CudaWeight
    from zinc.gguf.constants import GGMLType
    from zinc.gguf.quants import random_blocks
    dev = torch.device("cuda")
    t0 = time.time()
    res, table = [], []
    for qtype, n, k, glu in SHAPES:
        t = GGMLType(qtype)
        name = f"{t.name}:{n}x{k}" + (":glu" if glu else "")
        if args.shapes and name not in args.shapes.split(","):
            continue
        rng = np.random.default_rng(n + k + glu)
        qts = [QTensor(f"w{i}", t, (n, k), random_blocks(t, n * k, rng, scale=0.05)) for i in range(2 if glu else 1)]
        nbytes = sum(q.nbytes for q in qts)
        copies = max(1, min(8, (320 << 20) // nbytes + 1))
        ws = [[CudaWeight(q, dev) for q in qts] for _ in range(copies)]
        x = torch.randn((1, k), device=dev)
        xqt = mmvq.quantize_x(x)
        q = xqt[0].cpu().numpy().view(np.int8).astype(np.float64).reshape(1, -1, 32)
        xdq = (q * xqt[1].cpu().numpy()[..., :1]).reshape(1, k)
        ys = [xdq @ qq.dequantize().astype(np.float64).T for qq in qts]
        want = ys[0] / (1.0 + np.exp(-ys[0])) * ys[1] if glu else ys[0]
        y = torch.empty((1, n), device=dev)
        it = iter(range(1 << 30))

        def call(v, i=0):
            w = ws[i % copies]
            mmvq.matvec(xqt, w[0].parts, qtype, n, k, y, cfg=v, glu=(w[1].parts, GLU_ACTS["silu"]) if glu else None)

        default = mmvq.config(qtype, n, k, glu)
        rows = []
        for v in [default] + [v for v in variants_for(qtype, given) if v != default]:
            try:
                y.fill_(float("nan"))
                call(v)
                got = y.cpu().numpy()
                err = (float(np.linalg.norm(got - want) / np.linalg.norm(want)) if np.isfinite(got).all()
                       else float("inf"))
                us = bench_us(lambda v=v: call(v, next(it)))
                r = {"shape": name, "type": t.name, "N": n, "K": k, "glu": glu, "kernel": "mmvq", "cfg": v, "us": us,
                     "GBs": nbytes / us / 1e3, "rel_err": err}
            except Exception as e:  # noqa: BLE001 - a config that does not compile or launch
                r = {"shape": name, "type": t.name, "N": n, "K": k, "glu": glu, "kernel": "mmvq", "cfg": v,
                     "error": repr(e)[-400:]}
            res.append(r)
            rows.append(r)
        ok = [r for r in rows if "us" in r and r["rel_err"] < 1e-5]
        best = min(ok, key=lambda r: r["us"], default=None)
        best0 = min((r for r in ok if len(r["cfg"]) < 6 or r["cfg"][5] == 0), key=lambda r: r["us"], default=None)
        table.append((name, nbytes, rows[0], best0, best))
        print(f"{name:22} {nbytes / 1e6:6.1f} MB  default {rows[0].get('us', 0):7.1f} us  best V0 "
              f"{best0['cfg'] if best0 else None} {best0['us'] if best0 else 0:.1f}  "
              f"best {best['cfg'] if best else None} {best['us'] if best else 0:.1f} us  [{time.time() - t0:.0f} s]",
              flush=True)
        ws = None
        torch.cuda.empty_cache()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "mmvq-sweep.json").write_text(json.dumps({"gpu": torch.cuda.get_device_name(), "results": res},
                                                         indent=1))
    errs = [r for r in res if "error" in r]
    if errs:
        print(f"{len(errs)} configurations failed, first: {errs[0]}")
    bad = [r for r in res if r.get("rel_err", 0) > 1e-5]
    print(f"{len(bad)} configurations with rel_err > 1e-5" + (f", first: {bad[0]}" if bad else ""))
    print(f"\n{'shape':22} {'MB':>6} | {'default':>7} {'TB/s':>5} | {'best V0 cfg':18} {'us':>6} {'TB/s':>5} | "
          f"{'best cfg':20} {'us':>6} {'TB/s':>5} {'rel err':>8}")
    for name, nb, d, b0, b in table:
        def f(r, w):
            return (f"{str(r['cfg']) if w else '':{w}} {r['us']:6.1f} {r['GBs'] / 1e3:5.2f}" if r and "us" in r
                    else f"{'-':{w}} {'-':>6} {'-':>5}")
        print(f"{name:22} {nb / 1e6:6.1f} | {f(d, 0)[1:]} | {f(b0, 18)} | {f(b, 20)} "
              f"{b['rel_err'] if b else float('nan'):8.1e}")
    best = {(int(GGMLType[d["type"]]), d["N"], d["K"], d["glu"]): tuple(b["cfg"]) for _, _, d, _, b in table if b}
    print(f"\nbest configuration per (type, N, K, glu): {best}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
