"""Offline (no GPU): the sm_90 SASS of q8_0 KV tile forms, to find one that stays in the dot operand layout.

`python bench/cuda_kvq8_sass.py` compiles with Triton's offline compiler (`triton.compile`, target sm_90) and counts
the instructions that matter: shared loads and stores (a tile sent through shared memory again to change its
layout), ldmatrix, tensor-core MMAs, int -> float conversions (a quarter of the ALU rate) and byte permutes.

Rows:
- `split f16` / `split q8_0`: the backend's decode split kernel (`attention.attn_split_kernel`, Qwen3-8B's shape,
  rope + KV write on) on f16 and on q8_0 cells.
- `K f16`, `K i8`, `K i8 x gathered scale`, `K i8 per-block dots`: Q @ K^T on one (16, 128) x (128, 64) tile: an f16
  tile; an int8 tile converted with no scale (the ideal); each value times its scale gathered per element (what a
  dequantized tile needs); one dot per 32-value block on its own int8 tile, the scale on the partial scores.
- `V i8 (cells, dims) per-block dots`: P @ V with an int8 V tile in the cache's (cell, dim) order: the int8 B operand
  is read byte by byte (no transposing ldmatrix for 8-bit on sm_90); `V i8 (dims, cells)`: the same with V stored
  as (dim, cell), cells contiguous.
"""

from __future__ import annotations

import collections
import re
import sys
from pathlib import Path

import triton
import triton.language as tl

sys.path.insert(0, str(Path(__file__).parent))

from cuda_mmvq_sweep import sm90_listing  # noqa: E402

COUNT = ["LDGSTS", "LDS", "STS", "LDSM", "HMMA", "I2F", "PRMT", "BAR"]


@triton.jit
def k_tile(q, k, kd, out, n, MODE: tl.constexpr, D: tl.constexpr, BM: tl.constexpr, BS: tl.constexpr):
    dd = tl.arange(0, D)
    i = tl.arange(0, 32)
    rows = tl.arange(0, BM)
    qv = tl.load(q + rows[:, None] * D + dd[None, :]).to(tl.float16)
    acc = tl.zeros([BM, BS], tl.float32)
    NB: tl.constexpr = D // 32
    for s0 in range(0, n, BS):
        c = s0 + tl.arange(0, BS)
        if MODE == 0:
            s = tl.dot(qv, tl.load(k.to(tl.pointer_type(tl.float16)) + c[None, :] * D + dd[:, None]))
        elif MODE == 1:
            s = tl.dot(qv, tl.load(k + c[None, :] * D + dd[:, None]).to(tl.float16))
        elif MODE == 2:
            ks = tl.load(kd + c[None, :] * NB + dd[:, None] // 32)
            s = tl.dot(qv, tl.load(k + c[None, :] * D + dd[:, None]).to(tl.float16) * ks)
        else:
            s = tl.zeros([BM, BS], tl.float32)
            for b in tl.static_range(NB):
                qb = tl.load(q + rows[:, None] * D + b * 32 + i[None, :]).to(tl.float16)
                sb = tl.dot(qb, tl.load(k + c[None, :] * D + b * 32 + i[:, None]).to(tl.float16))
                s += sb * tl.load(kd + c * NB + b).to(tl.float32)[None, :]
        acc += s
    tl.store(out + rows[:, None] * BS + tl.arange(0, BS)[None, :], acc)


@triton.jit
def v_tile(p_ptr, v, vd, out, n, NB: tl.constexpr, BM: tl.constexpr, BS: tl.constexpr, TRANS: tl.constexpr):
    accs = ()
    for b in tl.static_range(NB):
        accs = accs + (tl.zeros([BM, 32], tl.float32),)
    i = tl.arange(0, 32)
    rows = tl.arange(0, BM)
    for s0 in range(0, n, BS):
        c = s0 + tl.arange(0, BS)
        p = tl.load(p_ptr + rows[:, None] * BS + tl.arange(0, BS)[None, :])
        new = ()
        for b in tl.static_range(NB):
            if TRANS:  # V stored (dim, cell): the tile's cells are contiguous
                vb = tl.load(v + (b * 32 + i[None, :]) * 65536 + c[:, None]).to(tl.float16)
            else:
                vb = tl.load(v + c[:, None] * (NB * 32) + b * 32 + i[None, :]).to(tl.float16)
            vs = tl.load(vd + c * NB + b).to(tl.float32)
            new = new + (tl.dot((p * vs[None, :]).to(tl.float16), vb, accs[b]),)
        accs = new
    for b in tl.static_range(NB):
        tl.store(out + rows[:, None] * (NB * 32) + b * 32 + i[None, :], accs[b])


def counts(fn, sig: dict, const: dict, warps: int = 4, stages: int = 3, extra: tuple = ()) -> dict:
    ptrs = [j for j, t in enumerate(sig.values()) if t.startswith("*")]
    sass, res = sm90_listing(fn, sig, const, ptrs, warps, stages)
    ops = [m.group(1) for line in sass.splitlines()
           for m in [re.match(r"\s+/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9_.]+)", line)] if m]
    c = collections.Counter(o.split(".")[0] for o in ops)
    out = {x: c[x] for x in COUNT + list(extra)}
    out["LDS.S8/U8"] = sum(1 for o in ops if o.startswith(("LDS.S8", "LDS.U8")))
    out["regs"] = int(re.search(r"REG:(\d+)", res).group(1))
    out["stack"] = int(re.search(r"STACK:(\d+)", res).group(1))
    return out


def split_kernel(q8: bool) -> dict:
    from zinc.backends.cuda.kernels import attention as ka

    names = ("q k v q_pos kv_pos m_out l_out o_out T S n_kv scale cap window NSPLIT qw knew kw vnew rc slots eps "
             "mscale kd vd").split()
    kv = "*i8" if q8 else "*fp16"
    types = ["*fp32", kv, kv, "*i32", "*i32", "*fp32", "*fp32", "*fp32", "i32", "i32", "i32", "fp32", "fp32", "i32",
             "i32", "*fp32", "*fp32", "*fp32", "*fp32", "*fp32", "*i32", "fp32", "fp32", "*fp16", "*fp16"]
    const = dict(R=4, D=128, DV=128, DP=128, DVP=128, HKV=8, BM=16, BS=64, SOFTCAP=False, KV16=True, EXACT=True,
                 ROPE=True, NDIMS=128, NEOX=True, QNORM=True, KNORM=True, FROM_POS=True, ONE=True, Q8=q8)
    return counts(ka.attn_split_kernel, dict(zip(names, types)), const, stages=2 if q8 else 3)


def main() -> None:
    ksig = dict(q="*fp32", k="*i8", kd="*fp16", out="*fp32", n="i32")
    rows = [("split f16", split_kernel(False)), ("split q8_0", split_kernel(True))]
    for mode, name in enumerate(["K f16", "K i8", "K i8 x gathered scale", "K i8 per-block dots"]):
        rows.append((name, counts(k_tile, ksig, dict(MODE=mode, D=128, BM=16, BS=64))))
    for trans, name in ((False, "V i8 (cells, dims) per-block dots"), (True, "V i8 (dims, cells) per-block dots")):
        rows.append((name, counts(v_tile, dict(p_ptr="*fp32", v="*i8", vd="*fp16", out="*fp32", n="i32"),
                                  dict(NB=4, BM=16, BS=64, TRANS=trans))))
    cols = COUNT + ["LDS.S8/U8", "regs"]
    print(f"{'form':36}" + "".join(f"{c:>10}" for c in cols))
    for name, c in rows:
        print(f"{name:36}" + "".join(f"{c[x]:>10}" for x in cols))


if __name__ == "__main__":
    main()
