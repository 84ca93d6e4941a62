"""Q8_0 decode matvec on f32 activations (`matvec_generic.q8_matvec`) against the 8-bit-activation one (`mmvq`).

`python bench/cuda_q8f_bench.py --out DIR` (on a GPU): for the Qwen3-8B decode shapes as Q8_0 (fused QKV, O,
gate+up+GLU, down, K, lm_head) and T = 1 and 4 rows, times `mmvq.matvec` (its default configuration, on an input
quantized beforehand, and `mmvq.quantize_x` alone) and every `q8_matvec` configuration (rows a program, values a
step, warps), each as the median of a replayed CUDA graph with weight copies rotated past the L2; checks each
against float64 math (mmvq on its quantized input, q8_matvec on x itself) and prints per shape the mmvq time, the
best q8_matvec configuration and the default's (`Q8F_CONFIG`), in us and TB/s of weight bytes. JSON to
DIR/q8f-bench.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cuda_mmvq_sweep import bench_us  # noqa: E402

SHAPES = [(6144, 4096, False), (4096, 4096, False), (12288, 4096, True), (4096, 12288, False), (1024, 4096, False),
          (151936, 4096, False)]
CONFIGS = [(bn, bk, nw) for bn in (1, 2, 4, 8) for bk in (512, 1024, 2048) for nw in (2, 4, 8) if bn * bk <= 8192]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path("."))
    args = ap.parse_args()
    import torch

    from zinc.backends.base import QTensor
    from zinc.backends.cuda.kernels import matvec_generic as kgm
    from zinc.backends.cuda.kernels import mmvq
    from zinc.backends.cuda.kernels.elementwise import GLU_ACTS
    from zinc.backends.cuda.weights import CudaWeight
    from zinc.gguf.constants import GGMLType
    dev, t8 = torch.device("cuda"), GGMLType.Q8_0
    from zinc.gguf.quants import random_blocks
    res, table = [], []
    for n, k, glu in SHAPES:
        rng = np.random.default_rng(n + k)
        qts = [QTensor(f"w{i}", t8, (n, k), random_blocks(t8, n * k, rng, scale=0.05)) for i in range(1 + glu)]
        nbytes = sum(q.nbytes for q in qts)
        copies = max(1, min(8, (320 << 20) // nbytes + 1))
        ws = [[CudaWeight(q, dev) for q in qts] for _ in range(copies)]
        wd = [q.dequantize().astype(np.float64) for q in qts]
        for T in (1, 4):
            name = f"Q8_0:{n}x{k}{':glu' if glu else ''} T={T}"
            x = torch.randn((T, k), device=dev)
            xqt = mmvq.quantize_x(x)
            q = xqt[0].cpu().numpy().view(np.int8).astype(np.float64).reshape(T, -1, 32)
            xdq = (q * xqt[1].cpu().numpy()[..., :1]).reshape(T, k)
            xf = x.cpu().numpy().astype(np.float64)

            def ref(xv):
                ys = [xv @ w.T for w in wd]
                return ys[0] / (1.0 + np.exp(-ys[0])) * ys[1] if glu else ys[0]

            want_q, want_f = ref(xdq), ref(xf)
            y = torch.empty((T, n), device=dev)
            it = iter(range(1 << 30))

            def err(want):
                got = y.cpu().numpy()
                return float(np.linalg.norm(got - want) / np.linalg.norm(want)) if np.isfinite(got).all() else 1e9

            def mm(i=0):
                w = ws[i % copies]
                mmvq.matvec(xqt, w[0].parts, 8, n, k, y, glu=(w[1].parts, GLU_ACTS["silu"]) if glu else None)

            mm()
            row = {"shape": name, "bytes": nbytes, "mmvq_us": bench_us(lambda: mm(next(it))), "mmvq_err": err(want_q),
                   "quantize_us": bench_us(lambda: mmvq.quantize_x(x)),
                   "mmvq_err_vs_f32_x": err(want_f), "q8f": []}
            for cfg in CONFIGS:
                def qf(i=0, cfg=cfg):
                    w = ws[i % copies]
                    kgm.q8_matvec(x, w[0].parts, n, k, y, glu=(w[1].parts, GLU_ACTS["silu"]) if glu else None,
                                  cfg=cfg)
                try:
                    y.fill_(float("nan"))
                    qf()
                    row["q8f"].append({"cfg": cfg, "err": err(want_f), "us": bench_us(lambda qf=qf: qf(next(it)))})
                except Exception as e:  # noqa: BLE001 - a configuration that does not compile
                    row["q8f"].append({"cfg": cfg, "error": repr(e)[-300:]})
            ok = [r for r in row["q8f"] if "us" in r and r["err"] < 1e-5]
            best = min(ok, key=lambda r: r["us"], default=None)
            dflt = next((r for r in ok if tuple(r["cfg"]) == kgm.Q8F_CONFIG), None)
            res.append(row)
            table.append((name, nbytes, row, best, dflt))
            print(f"{name:26} mmvq {row['mmvq_us']:6.1f} us (+ quantize {row['quantize_us']:4.1f}), err vs f32 x "
                  f"{row['mmvq_err_vs_f32_x']:.1e}; q8f best {best and best['cfg']} {best and best['us']:.1f} us; "
                  f"default {dflt and dflt['us']:.1f}", flush=True)
        ws = None
        torch.cuda.empty_cache()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "q8f-bench.json").write_text(json.dumps({"gpu": torch.cuda.get_device_name(), "results": res},
                                                        indent=1))
    print(f"\n{'shape':26} {'MB':>6} | {'mmvq us':>7} {'TB/s':>5} | {'q8f best':16} {'us':>6} {'TB/s':>5} | "
          f"{'default us':>10}")
    for name, nb, row, best, dflt in table:
        print(f"{name:26} {nb / 1e6:6.1f} | {row['mmvq_us']:7.1f} {nb / row['mmvq_us'] / 1e6:5.2f} | "
              f"{str(best['cfg']) if best else '-':16} {best['us'] if best else 0:6.1f} "
              f"{nb / best['us'] / 1e6 if best else 0:5.2f} | {dflt['us'] if dflt else 0:10.1f}")
    one = [row for row in res if row["shape"].endswith("T=1")]
    total = {tuple(c): sum(next((r["us"] for r in row["q8f"] if tuple(r["cfg"]) == tuple(c) and "us" in r
                                 and r["err"] < 1e-5), 1e9) for row in one) for c in CONFIGS}
    pick = min(total, key=total.get)
    print(f"\nsum over the one-row shapes: mmvq {sum(r['mmvq_us'] for r in one):.1f} us (+ quantize "
          f"{sum(r['quantize_us'] for r in one):.1f}), q8f default {total[tuple(kgm.Q8F_CONFIG)]:.1f}, "
          f"best {pick} {total[pick]:.1f}")
    print("PICK " + ",".join(map(str, pick)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
