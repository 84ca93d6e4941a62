"""Programmatic dependent launch on a decode layer's quantize and matvec launches: where to wait and when to trigger.

    python bench/cuda_pdl_layers.py [--out DIR]      (on a GPU)

Qwen3-8B's shapes (the QKV pair: Q and K stacked, 5120 x 4096 Q4_K, beside V 1024 x 4096 Q6_K; gate + up 12288 x
4096 Q4_K; down 4096 x 12288 Q4_K), 36 layers each with its own weights (more bytes than the L2): per layer
norm_quantize -> QKV pair, norm_quantize (of 4096 of the QKV output) -> GLU, quantize_x -> down (whose output is the
next layer's input): 6 launches. GPU µs of a pass (a replayed CUDA graph) for each form of FORMS: (the quantize
kernels' (wait, trigger), the matvecs' (wait, trigger)); wait 1: after the first step's weight loads, 2: before any
load (a quantize kernel always waits first); trigger 1: at the programs' start, 2: at their end. Each form's
output after one layer and after the pass against the form without PDL. Writes DIR/pdl-layers.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cuda_mmvq_sweep import bench_us  # noqa: E402

from zinc.backends.base import QTensor  # noqa: E402
from zinc.backends.cuda.kernels import mmvq  # noqa: E402
from zinc.backends.cuda.kernels.elementwise import GLU_ACTS  # noqa: E402
from zinc.backends.cuda.weights import CudaWeight  # noqa: E402
from zinc.gguf.constants import GGMLType  # noqa: E402
from zinc.gguf.quants import random_blocks  # noqa: E402

D, F, QK, V = 4096, 12288, 5120, 1024
FORMS = {  # name: (quantize (wait, trigger), matvec (wait, trigger))
    "off": ((0, 0), (0, 0)),
    "mv early, q trig end": ((0, 2), (1, 0)),
    "mv early, q trig start": ((0, 1), (1, 0)),
    "mv early wait first, q trig end": ((0, 2), (2, 0)),
    "all early, trig end": ((1, 2), (1, 2)),
    "all early, trig start": ((1, 1), (1, 1)),
    "all early, mv trig end, q trig start": ((1, 1), (1, 2)),
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path("."))
    ap.add_argument("--layers", type=int, default=36)
    a = ap.parse_args()
    dev = torch.device("cuda")
    rng = np.random.default_rng(0)
    q4, q6 = GGMLType.Q4_K, GGMLType.Q6_K

    def weight(t, n, k):
        return CudaWeight(QTensor("w", t, (n, k), random_blocks(t, n * k, rng, scale=0.02)), dev).parts

    base = dict(qk=weight(q4, QK, D), v=weight(q6, V, D), g=weight(q4, F, D), u=weight(q4, F, D), d=weight(q4, D, F))
    L = [{k: tuple(p.clone() for p in v) for k, v in base.items()} for _ in range(a.layers)]
    g = torch.Generator(device=dev).manual_seed(0)
    w1, w2 = torch.rand(D, device=dev, generator=g) + 0.5, torch.rand(D, device=dev, generator=g) + 0.5
    h0, r0 = torch.randn(1, D, device=dev, generator=g), torch.randn(1, D, device=dev, generator=g)
    buf = dict(qk=torch.empty(1, QK, device=dev), v=torch.empty(1, V, device=dev), g=torch.empty(1, F, device=dev),
               n1=torch.empty(1, D, device=dev), s1=torch.empty(1, D, device=dev), n2=torch.empty(1, D, device=dev),
               s2=torch.empty(1, D, device=dev))
    hs = [torch.empty(1, D, device=dev) for _ in range(a.layers + 1)]
    hs[0].copy_(h0)
    silu = GLU_ACTS["silu"]

    def run(qp, mp, layers=a.layers):
        for i, lay in enumerate(L[:layers]):
            x = mmvq.norm_quantize(hs[i], w1, 1e-6, buf["n1"], res=r0, sum_out=buf["s1"], pdl=qp)
            assert mmvq.matvec_pair(x, (lay["qk"], int(q4), QK, D, buf["qk"]), (lay["v"], int(q6), V, D, buf["v"]),
                                    pdl=mp)
            x = mmvq.norm_quantize(buf["qk"][:, :D], w2, 1e-6, buf["n2"], res=buf["s1"], sum_out=buf["s2"], pdl=qp)
            mmvq.matvec(x, lay["g"], int(q4), F, D, buf["g"], glu=(lay["u"], silu), pdl=mp)
            x = mmvq.quantize_x(buf["g"], pdl=qp)
            mmvq.matvec(x, lay["d"], int(q4), D, F, hs[i + 1], pdl=mp)

    res, one, last = {}, {}, {}
    for name, (qp, mp) in FORMS.items():
        run(qp, mp, 1)
        torch.cuda.synchronize()
        one[name] = hs[1].clone()
        res[name] = bench_us(lambda qp=qp, mp=mp: run(qp, mp), rep=200)
        torch.cuda.synchronize()
        last[name] = hs[-1].clone()

    def rel(x, y):
        return float((x - y).abs().max() / y.abs().max())

    row = dict(gpu=torch.cuda.get_device_name(), layers=a.layers,
               forms={k: list(map(list, v)) for k, v in FORMS.items()}, us=res,
               gain_per_layer_us={k: (res["off"] - v) / a.layers for k, v in res.items()},
               one_layer_rel_diff={k: rel(v, one["off"]) for k, v in one.items()},
               pass_rel_diff={k: rel(v, last["off"]) for k, v in last.items()})
    for k in FORMS:
        print(f"{k:38}: {res[k]:8.1f} us a pass, gain a layer {row['gain_per_layer_us'][k]:6.2f} us "
              f"(6 launches), output vs off: one layer {row['one_layer_rel_diff'][k]:.1e}, "
              f"the pass {row['pass_rel_diff'][k]:.1e}")
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "pdl-layers.json").write_text(json.dumps(row, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
