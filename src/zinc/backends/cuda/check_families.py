"""GPU check: every tiny model family at every file type the CUDA backend loads, against the NumPy backend.

    python -m zinc.backends.cuda.check_families --out DIR [--families qwen35-tiny,...] [--ftypes Q4_0,...]
        [--kv-type q8_0]

For each (family, file type) it writes the tiny random model, runs it on `CudaOps` with CUDA graphs
on (a 20-token prefill, then 20 single-token decode steps, which replay a captured graph) and on
`CpuOps` (teacher-forced logits of the same 40 tokens), and prints one table row: argmax agreement
where the reference's top-1/top-2 margin is >= 0.05 and, in a mixture of experts, no layer's routing of that
position is a near tie (its k-th and (k+1)-th router logits within ROUTE_TIE: f16 or 8-bit activations may pick
the other expert, as the NumPy backend does on such rounded activations), mean KL (all positions, and decode
steps only),
the number of graph captures, and ok/FAIL (agreement 1.0 and mean KL <= 1e-3). The rows also go to
DIR/check_families.json. Exits 1 when any row fails. --kv-type sets both backends' KV cells (default: f16 on
CUDA against f32 on the CPU; q8_0: both q8_0, the same quantized cells).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np

from zinc.backends.cpu import CpuOps

FAMILIES = ["qwen3-tiny", "llama3-tiny", "qwen3moe-tiny", "qwen35-tiny", "qwen35moe-tiny", "gemma3-tiny",
            "gemma4-tiny", "gemma4moe-tiny", "gpt-oss-tiny"]
FTYPES = ["F16", "Q8_0", "Q4_K_M", "Q6_K", "Q5_K_M", "Q4_0", "Q5_0", "MXFP4_MOE"]
N_PREFILL, N_DECODE = 20, 20
# a position whose reference routing has a top-k boundary gap below this (router logits) in some layer is no sure
# argmax: gemma4moe-tiny Q5_K_M's position 18 (gap 0.0028 in layer 2) flips two experts, and its argmax, with the
# activations rounded to f16 in the NumPy backend as the CUDA prefill's GEMMs round them (bench/RESULTS.md, session 25)
ROUTE_TIE = 0.005


def applies(family: str, ftype: str) -> bool:
    """MXFP4_MOE only changes the expert tensors: run it on the mixture-of-experts families."""
    from zinc.synth import get_preset

    return ftype != "MXFP4_MOE" or get_preset(family).n_expert > 0


class RouteGaps(CpuOps):
    """The NumPy backend, keeping per row of its router calls the smallest gap between the k-th and (k+1)-th
    router logits over its layers (`gaps`, None without experts): how near a tie each position's routing was."""

    gaps: np.ndarray | None = None

    def router_topk(self, logits, k, *args):
        if logits.shape[-1] > k:
            top = -np.sort(-np.asarray(logits, np.float32), axis=-1)
            g = top[:, k - 1] - top[:, k]
            self.gaps = g if self.gaps is None else np.minimum(self.gaps, g)
        return super().router_topk(logits, k, *args)


def check_one(family: str, ftype: str, tmp: Path, device: str = "cuda", kv_type: str | None = None) -> dict:
    from zinc.api import load
    from zinc.backends.cuda.ops import CudaOps
    from zinc.testing.compare import argmax_misses, compare_logits
    from zinc.synth import write_model

    path = tmp / f"{family}-{ftype}.gguf"
    write_model(str(path), family, ftype=ftype, seed=1)
    n = N_PREFILL + N_DECODE
    kv = {"kv_dtype": kv_type} if kv_type else {}
    ref_ops = RouteGaps(**kv)
    ref_model = load(path, backend=ref_ops, n_ctx=64)
    ids = [int(i) for i in np.random.default_rng(2).integers(0, ref_model.n_vocab, n)]
    ref = ref_model.logits(ids)
    ties = None
    if ref_ops.gaps is not None:
        if ref_ops.gaps.shape != (n,):
            raise RuntimeError(f"{family}: router gaps of {ref_ops.gaps.shape} rows for {n} positions")
        ties = ref_ops.gaps < ROUTE_TIE
    m = load(path, backend=CudaOps(device=device, graphs=True, **kv), n_ctx=64)
    cache = m.new_cache(64)
    t0 = time.perf_counter()
    steps = [m.forward(ids[:N_PREFILL], cache)] + [m.forward([t], cache) for t in ids[N_PREFILL:]]
    got = np.concatenate(steps)
    wall = time.perf_counter() - t0
    full = compare_logits(got, ref, exclude=ties)
    dec = compare_logits(got[N_PREFILL:], ref[N_PREFILL:], exclude=None if ties is None else ties[N_PREFILL:])
    graphs = m.ops._graphs.captures if m.ops._graphs is not None else 0
    ok = full["argmax_agree"] == 1.0 and full["mean_kl"] <= 1e-3 and dec["mean_kl"] <= 1e-3
    return {"family": family, "ftype": ftype, "kv_type": m.ops.kv_dtype, "argmax_agree": full["argmax_agree"], "n_sure": full["n_sure"],
            "mean_kl": full["mean_kl"], "decode_mean_kl": dec["mean_kl"], "rel_err": full["rel_err"],
            "graph_captures": graphs, "wall_s": round(wall, 3), "misses": argmax_misses(got, ref, exclude=ties),
            "route_ties": [] if ties is None else [int(i) for i in np.flatnonzero(ties)], "ok": bool(ok)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="directory for check_families.json")
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--ftypes", default=",".join(FTYPES))
    ap.add_argument("--device", default="cuda", help="torch device (graphs are only captured on cuda)")
    ap.add_argument("--kv-type", choices=["f32", "f16", "q8_0"], help="KV cells of both backends")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    print(f"{'family':16s} {'ftype':10s} {'agree':>6s} {'n_sure':>6s} {'mean_kl':>10s} {'dec_kl':>10s} "
          f"{'graphs':>6s} {'wall_s':>7s}  result", flush=True)
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for fam in args.families.split(","):
            for ft in args.ftypes.split(","):
                if not applies(fam, ft):
                    continue
                try:
                    r = check_one(fam, ft, Path(tmp), args.device, args.kv_type)
                except Exception as e:  # one broken pair must not hide the others
                    r = {"family": fam, "ftype": ft, "ok": False, "error": f"{type(e).__name__}: {e}",
                         "traceback": traceback.format_exc()}
                    print(f"{fam:16s} {ft:10s} ERROR {r['error']}", flush=True)
                else:
                    print(f"{fam:16s} {ft:10s} {r['argmax_agree']:6.3f} {r['n_sure']:6d} {r['mean_kl']:10.2e} "
                          f"{r['decode_mean_kl']:10.2e} {r['graph_captures']:6d} {r['wall_s']:7.2f}  "
                          f"{'ok' if r['ok'] else 'FAIL'}", flush=True)
                    for ms in r["misses"]:
                        print(f"    miss at position {ms['pos']}: reference margin {ms['ref_margin']:.4f}, "
                              f"got's pick {ms['got_gap']:.4f} above the reference's top-1", flush=True)
                rows.append(r)
                (Path(tmp) / f"{fam}-{ft}.gguf").unlink(missing_ok=True)
    total = time.perf_counter() - t_start
    n_ok = sum(r["ok"] for r in rows)
    print(f"{n_ok}/{len(rows)} ok in {total:.1f} s")
    (out / "check_families.json").write_text(json.dumps({"rows": rows, "total_s": total}, indent=1))
    return 0 if n_ok == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
