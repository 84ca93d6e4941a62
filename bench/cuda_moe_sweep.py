"""MoE decode on CUDA: the selected experts' matvec, old vs new, at real model shapes.

Old: `matvec_generic.matvec_experts` (f32 activations, dequantize-and-FMA). New: `mmvq.matvec_experts`
(8-bit activations, integer dot products), alone, and as one gate+up+GLU kernel (`glu=`).

`python bench/cuda_moe_sweep.py` on a GPU: for each (model, projection, type) of CASES and T = 1
and 4 tokens, checks the new kernel against the old one (8-bit activations: rel err ~1e-3), times
every variant (median of triton's do_bench_cudagraph: a replayed graph of many calls, each call on
other random expert ids of a stack larger than the L2, so the weights come from HBM), prints a
table (us, GB/s of expert weights read: T * k experts' bytes, twice for gate + up) and writes
$OUT/cuda-moe-sweep.json (or --out DIR). `--small` runs the same at tiny sizes (in Triton's
interpreter off a GPU, where the "us" are wall-clock of one call) to show that the script works.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

from zinc.gguf.constants import GGMLType as T

# (model, projection, type, N, K, experts, used, activation); "gate_up" rows time gate, up and the GLU
CASES = [("qwen35moe", "gate_up", T.Q4_K, 512, 2048, 256, 8, "silu"),
         ("qwen35moe", "down", T.Q4_K, 2048, 512, 256, 8, ""),
         ("qwen35moe", "down", T.Q6_K, 2048, 512, 256, 8, ""),
         ("qwen35moe", "gate_up", T.Q8_0, 512, 2048, 256, 8, "silu"),
         ("qwen35moe", "down", T.Q8_0, 2048, 512, 256, 8, ""),
         ("qwen3moe", "gate_up", T.Q4_K, 768, 2048, 128, 8, "silu"),
         ("qwen3moe", "down", T.Q6_K, 2048, 768, 128, 8, ""),
         ("gpt-oss", "gate_up", T.MXFP4, 2880, 2880, 32, 4, "swiglu_oai"),
         ("gpt-oss", "down", T.MXFP4, 2880, 2880, 32, 4, "")]
SMALL = [("tiny", "gate_up", T.Q4_K, 9, 256, 5, 2, "silu"), ("tiny", "down", T.Q6_K, 7, 256, 5, 2, ""),
         ("tiny", "gate_up", T.MXFP4, 5, 288, 4, 2, "swiglu_oai"), ("tiny", "down", T.Q8_0, 7, 256, 5, 2, "")]
NEW = [(1, 8, 1), (1, 16, 1), (1, 32, 1), (2, 8, 1), (2, 16, 1), (2, 16, 2), (4, 8, 1), (4, 8, 2),
       (4, 16, 4), (8, 8, 2), (1, 32, 2)]  # (BN, NG, num_warps) of mmvq_experts_kernel
# Q4_K and Q6_K also: the rows-as-streams form (kernels/mmvs.py), (R, units per thread, warps, 1, 1, 2, U)
NEW2 = [(r, upt, nw, 1, 1, 2, 1) for r in (1, 2, 4) for upt in (1, 2) for nw in (1, 2)]
OLD = [(16, 4), (8, 2), (32, 4), (64, 8)]  # (BN, num_warps) of the generic kernel
IDSETS = 64  # distinct random id sets the timed calls rotate through


def timer(dev):
    """us of one call: on a GPU, the median over a replayed CUDA graph of many calls."""
    if dev.type == "cpu":
        def wall(fn):
            t0 = time.perf_counter()
            fn()
            return (time.perf_counter() - t0) * 1e6
        return wall
    import triton

    def gpu(fn):
        with torch.cuda.stream(torch.cuda.Stream()):
            return float(triton.testing.do_bench_cudagraph(fn, rep=25, return_mode="median")) * 1e3
    return gpu


def stack(t, e, n, k, dev, rng):
    from zinc.backends.base import QTensor
    from zinc.backends.cuda.weights import CudaWeight
    from zinc.gguf.quants import random_blocks

    return CudaWeight(QTensor("w", t, (e, n, k), random_blocks(t, e * n * k, rng, scale=0.05)), dev)


def rel(a, b) -> float:
    a, b = a.double(), b.double()
    return float(torch.linalg.norm(a - b) / torch.linalg.norm(b))


def run_case(case, tokens: int, dev, bench, variants, old_variants) -> list[dict]:
    """Every variant of one case at T = tokens: rows of the JSON."""
    from zinc.backends.cuda.kernels import elementwise as kel
    from zinc.backends.cuda.kernels import matvec_generic as kgm
    from zinc.backends.cuda.kernels import mmvq

    model, proj, t, n, k, E, nsel, act = case
    if t in (T.Q4_K, T.Q6_K):
        variants = variants + [v for v in NEW2 if proj == "down" or v[0] <= 2]  # a GLU takes R <= 2
    rng = np.random.default_rng(n + k + tokens)
    w = stack(t, E, n, k, dev, rng)
    up = stack(t, E, n, k, dev, rng) if proj == "gate_up" else None
    idsets = [torch.from_numpy(np.stack([rng.choice(E, nsel, replace=False) for _ in range(tokens)])
                               .astype(np.int32)).to(dev) for _ in range(IDSETS)]
    nxt = iter(range(1 << 40))

    def ids():
        return idsets[next(nxt) % IDSETS]

    rows_x = tokens if proj == "gate_up" else tokens * nsel  # down: one input per (token, slot)
    x = torch.randn((rows_x, k), device=dev)
    xqt = mmvq.quantize_x(x)
    xin = x if proj == "gate_up" else x.view(tokens, nsel, k)
    out, o2, o3 = (torch.empty((tokens, nsel, n), device=dev) for _ in range(3))
    one = tokens * nsel * w.nbytes / E  # bytes of one projection's selected experts
    base = {"model": model, "proj": proj, "type": t.name, "N": n, "K": k, "E": E, "k": nsel, "T": tokens}
    res = []

    def row(kernel, fn, nbytes, cfg=None, check=None):
        r = dict(base, kernel=kernel, cfg=cfg)
        try:
            fn()
            if check is not None:
                r["rel_err"] = rel(*check())
            us = bench(fn)
            r.update(us=us, GBs=nbytes / us / 1e3)
        except Exception as e:  # noqa: BLE001 - a variant that does not compile or launch
            r["error"] = repr(e)[-300:]
        res.append(r)

    qt = int(t)
    ref = torch.empty_like(out)
    kgm.matvec_experts(xin, w.parts, qt, n, k, idsets[0], ref)
    for bn, nw in old_variants:
        row("old", lambda: kgm.matvec_experts(xin, w.parts, qt, n, k, ids(), out, bn=bn, num_warps=nw), one, (bn, nw))
    for v in [None] + variants:
        row("new", lambda: mmvq.matvec_experts(xqt, w.parts, qt, n, k, ids(), out, cfg=v), one, v,
            lambda: (mmvq.matvec_experts(xqt, w.parts, qt, n, k, idsets[0], out, cfg=v) or out, ref))
    if proj == "down":
        row("quantize_x", lambda: mmvq.quantize_x(x), 0)
        row("new+quantize_x", lambda: mmvq.matvec_experts(mmvq.quantize_x(x), w.parts, qt, n, k, ids(), out), one)
        return res
    code = kel.GLU_ACTS[act]

    def old_seq():
        i = ids()
        kgm.matvec_experts(xin, w.parts, qt, n, k, i, o2)
        kgm.matvec_experts(xin, up.parts, qt, n, k, i, o3)
        kel.glu(o2, o3, act, out)

    def new_seq():
        i = ids()
        mmvq.matvec_experts(xqt, w.parts, qt, n, k, i, o2)
        mmvq.matvec_experts(xqt, up.parts, qt, n, k, i, o3)
        kel.glu(o2, o3, act, out)

    row("old gate+up+glu", old_seq, 2 * one)
    row("new gate+up+glu", new_seq, 2 * one)
    kgm.matvec_experts(xin, up.parts, qt, n, k, idsets[0], o3)
    gref = torch.empty_like(out)
    kel.glu(ref, o3, act, gref)
    for v in [None] + variants:
        row("new glu", lambda: mmvq.matvec_experts(xqt, w.parts, qt, n, k, ids(), out, glu=(up.parts, code), cfg=v),
            2 * one, v, lambda: (mmvq.matvec_experts(xqt, w.parts, qt, n, k, idsets[0], out, glu=(up.parts, code),
                                                      cfg=v) or out, gref))
    return res


def summary(res: list[dict]) -> str:
    """One line per (case, T, kernel): the default (cfg None) and the best variant."""
    lines, seen = [], {}
    for r in res:
        seen.setdefault((r["model"], r["proj"], r["type"], r["N"], r["K"], r["T"], r["kernel"]), []).append(r)
    for (m, p, t, n, k, tok, kern), rs in seen.items():
        ok = [r for r in rs if "us" in r]
        if not ok:
            lines.append(f"{m:9} {p:7} {t:5} {n:5}x{k:<5} T{tok} {kern:16} FAILED {rs[0].get('error')}")
            continue
        best = min(ok, key=lambda r: r["us"])
        dflt = next((r for r in ok if r["cfg"] is None), ok[0])
        errs = [r["rel_err"] for r in ok if "rel_err" in r]
        lines.append(f"{m:9} {p:7} {t:5} {n:5}x{k:<5} T{tok} {kern:16} {dflt['us']:8.1f} us {dflt['GBs']:6.0f} GB/s"
                     f"   best {best['us']:8.1f} us {best['GBs']:6.0f} GB/s {str(best['cfg']):12}"
                     + (f" max err {max(errs):.1e}" if errs else ""))
    return "\n".join(lines)


def suggested(res: list[dict]) -> dict:
    """(type, K, glu) -> the variant of `mmvq.matvec_experts` with the least total time over the cases and T."""
    tot: dict = {}
    for r in res:
        if r["kernel"] in ("new", "new glu") and "us" in r:
            key = (r["type"], r["K"], r["kernel"] == "new glu")
            tot.setdefault(key, {}).setdefault(tuple(r["cfg"]) if r["cfg"] else None, []).append(r["us"])
    full = {key: {c: v for c, v in cs.items() if len(v) == max(len(u) for u in cs.values())} for key, cs in tot.items()}
    return {key: min(cs, key=lambda c: sum(cs[c])) for key, cs in full.items()}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    ap.add_argument("--small", action="store_true", help="tiny shapes (Triton's interpreter off a GPU)")
    ap.add_argument("--models", default="", help="comma-separated model names of CASES to run")
    args = ap.parse_args()
    if args.small:  # set up Triton's interpreter off a GPU as the tests do, before triton is imported
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        import conftest  # noqa: F401
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    cases = SMALL if args.small else [c for c in CASES if not args.models or c[0] in args.models.split(",")]
    variants = [(8, 4, 1)] if args.small else NEW
    old_variants = OLD[:1] if args.small else OLD
    bench, res = timer(dev), []
    print(f"{'model':9} {'proj':7} {'type':5} {'N x K':11} T  {'kernel':16} {'default cfg':27} best of the variants")
    for case in cases:
        for tokens in (1, 2) if args.small else (1, 4):
            rs = run_case(case, tokens, dev, bench, variants, old_variants)
            res += rs
            print(summary(rs), flush=True)
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / "cuda-moe-sweep.json").write_text(json.dumps(
                {"gpu": torch.cuda.get_device_name() if dev.type == "cuda" else "cpu", "results": res}, indent=1))
        if dev.type == "cuda":
            torch.cuda.empty_cache()
    best = suggested(res)
    print("mmvq.EXPERT_CONFIG = {" + ", ".join(f"({int(getattr(T, t))}, {k}, {g}): {c}" for (t, k, g), c in best.items()
                                            if c is not None) + "}  # (None: the default is best: "
          + ", ".join(f"{t} K {k}{' glu' if g else ''}" for (t, k, g), c in best.items() if c is None) + ")")
    bad = [r for r in res if r.get("rel_err", 0.0) > 2e-2 or "error" in r]
    print(f"{len(bad)} rows failed or off by rel err > 2e-2" + (f", first: {bad[0]}" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
