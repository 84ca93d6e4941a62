"""Offline (no GPU): the decode split kernel (`kattn.attn_split_kernel`) compiled for sm_90 at Qwen3-8B's shapes (one
token, rope + norms in the prologue, f16 cells, one f16 operand each), per (cells a step, stages, warps): registers,
stack (spills), and the SASS counts of spill stores / loads, cp.async tile copies (LDGSTS), plain global loads,
shared loads and tensor-core MMAs.

    python bench/cuda_attn_sass.py [--rows "[(64,3,4),(128,3,4),(128,3,8)]"]

The compile takes the alignment Triton's launcher specializes at run time (without it the tiles' loads are 2-byte
plain loads and the rows spill: not what runs). Session 37 (bench/RESULTS.md, local Triton 3.5.0): 64 cells at 3
stages and 4 warps 122 registers, 128 cells 154, no stack, every tile by cp.async.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from cuda_mmvq_sweep import sm90_listing  # noqa: E402

from zinc.backends.cuda.kernels import attention as kattn  # noqa: E402

ARGS = ("q:*fp32 k:*fp16 v:*fp16 q_pos:*i32 kv_pos:*i32 m_out:*fp32 l_out:*fp32 o_out:*fp32 T:i32 S:i32 n_kv:i32 "
        "scale:fp32 cap:fp32 window:i32 NSPLIT:i32 qw:*fp32 knew:*fp32 kw:*fp32 vnew:*fp32 rc:*fp32 slots:*i32 eps:fp32 "
        "mscale:fp32 kd:*fp16 vd:*fp16 sinks:*fp32 out:*fp32 xq:*i32 xd:*fp32 xs:*fp32 HQ:i32")


def report(bs: int, stages: int, warps: int) -> str:
    const = dict(R=4, D=128, DV=128, DP=128, DVP=128, HKV=8, BM=16, BS=bs, SOFTCAP=False, KV16=True, EXACT=False,
                 ROPE=True, NDIMS=128, NEOX=True, QNORM=True, KNORM=True, FROM_POS=False, ONE=True, Q8=False,
                 FINAL=False, HAS_SINK=False, QUANT=False, PDL=0, TRIG=3, STEPS=0, CLUSTER=0, CDC=32)
    sig = dict(a.split(":") for a in ARGS.split())
    # what Triton's launcher specializes at run time: 16-byte aligned buffers, and the integers that are multiples
    # of 16 there (the cache's cells, the splits, the query heads)
    aligned = [i for i, (n, t) in enumerate(sig.items()) if t.startswith("*") or n in ("S", "NSPLIT", "HQ")]
    sass, res = sm90_listing(kattn.attn_split_kernel, sig, const, aligned, warps, stages)
    regs, stack = re.search(r"REG:(\d+)", res).group(1), re.search(r"STACK:(\d+)", res).group(1)
    counts = {op: len(re.findall(rf"\s{op}[\s.]", sass)) for op in ("STL", "LDL", "LDGSTS", "LDG", "LDS", "HMMA")}
    return f"{bs:5} {stages:6} {warps:5} {regs:>4} {stack:>5}  " + "  ".join(f"{k} {v}" for k, v in counts.items())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="[(64,3,4),(64,3,8),(128,3,4),(128,3,8),(128,2,4)]",
                    help="(cells a step, stages, warps) rows")
    rows = ast.literal_eval(ap.parse_args().rows)
    print(f"{'cells':>5} {'stages':>6} {'warps':>5} {'regs':>4} {'stack':>5}  SASS counts")
    for r in rows:
        print(report(*r), flush=True)


if __name__ == "__main__":
    main()
