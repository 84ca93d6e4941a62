"""`zinc bench` (or the step profile) with the decode matvec configurations of a sweep's JSON.

    python bench/cuda_cfg_bench.py SWEEP.json|- [--max-v V] [--experts MOE_SWEEP.json] [--no-fold] [--no-pair]
        [--no-experts-gemm] bench -m MODEL ... --json
    python bench/cuda_cfg_bench.py SWEEP.json|- profile MODEL --out DIR

Reads `bench/cuda_mmvq_sweep.py`'s mmvq-sweep.json, takes per (type, N, K, glu) the fastest configuration
within 1e-5 of the float64 reference (of variant V at most, --max-v), puts them in `mmvq.SHAPE_CONFIG`
and runs the rest of the command line in this process (`zinc.cli` or `cuda_step_profile`). The table used
goes to stderr. `-` instead of a JSON keeps `mmvq.config`'s defaults. --experts: `bench/cuda_moe_sweep.py`'s
cuda-moe-sweep.json, whose suggested configurations (least total time per (type, K, glu)) go to
`mmvq.EXPERT_CONFIG`. --no-fold: shared experts stay out of the routed stacks (`CudaOps.fold_shared_experts`
off), --no-pair: one launch per weight where `CudaOps.matmuls` would pair two, --no-experts-gemm: a prompt's expert
matmuls as before the grouped GEMM (`CudaOps._gemm_experts` off: the matvec over pairs or the per-expert loop); for
A/B runs.
"""

from __future__ import annotations

import json
import runpy
import sys


def best_configs(path: str, max_v: int = 9) -> dict:
    from zinc.gguf.constants import GGMLType
    best: dict = {}
    for r in json.load(open(path))["results"]:
        cfg = tuple(r["cfg"])
        v = cfg[5] if len(cfg) > 5 else 0
        if "us" not in r or r["rel_err"] > 1e-5 or v > max_v:
            continue
        key = (int(GGMLType[r["type"]]), r["N"], r["K"], bool(r["glu"]))
        if key not in best or r["us"] < best[key][1]:
            best[key] = (cfg, r["us"])
    return best


def main() -> int:
    args = sys.argv[1:]
    max_v = 9
    from zinc.backends.cuda.kernels import mmvq
    while len(args) > 2 and args[1] in ("--max-v", "--experts", "--no-fold", "--no-pair", "--no-experts-gemm"):
        if args[1] in ("--no-fold", "--no-pair", "--no-experts-gemm"):
            from zinc.backends.base import BaseOps
            from zinc.backends.cuda.ops import CudaOps
            if args[1] == "--no-fold":
                CudaOps.fold_shared_experts = 0
            elif args[1] == "--no-experts-gemm":
                CudaOps._gemm_experts = lambda self, w, pairs: False
            else:
                CudaOps.matmuls = BaseOps.matmuls  # one launch per weight
            del args[1]
            continue
        if args[1] == "--max-v":
            max_v = int(args[2])
        else:
            sys.path.insert(0, "bench")
            from cuda_moe_sweep import suggested
            from zinc.gguf.constants import GGMLType
            got = suggested(json.load(open(args[2]))["results"])
            mmvq.EXPERT_CONFIG.update({(int(GGMLType[t]), k, g): c for (t, k, g), c in got.items() if c})
            print(f"expert configs: {got}", file=sys.stderr)
        del args[1:3]
    best = best_configs(args[0], max_v) if args[0] != "-" else {}
    mmvq.SHAPE_CONFIG.update({k: c for k, (c, _) in best.items()})
    for k, (c, us) in sorted(best.items()):
        print(f"config {k}: {c} {us:.2f} us", file=sys.stderr)
    if args[1] == "profile":
        sys.argv = ["cuda_step_profile.py"] + args[2:]
        runpy.run_path("bench/cuda_step_profile.py", run_name="__main__")
        return 0
    from zinc.cli import main as cli
    return cli(args[1:])


if __name__ == "__main__":
    sys.exit(main())
