"""Why the CUDA decode of a random-weight GPT-OSS differs from its prefill: NumPy emulation, no GPU.

    python bench/gptoss_route_flips.py [--layers 6] [-n 8] [--by-weight]

Writes the gpt-oss-20b preset at its full widths with fewer layers and a 512-token vocab
(MXFP4_MOE, random blocks like the full file), then runs the NumPy backend four ways on the same
tokens: exact f32; the activations of every quantized matmul rounded to 8 bits in blocks of 32 as
the CUDA decode matvecs do (`mmvq.quantize_x`); the same for the dense Q8_0 weights only (experts
exact); and the activations rounded to f16 as the prefill GEMMs do. For each: logits against exact
(relative error, mean KL, per position) and the (layer, token) pairs whose top-4 experts changed.
With --by-weight, 8-bit rounding on one weight kind at a time, and the max change of the router
logits per layer. Per-layer smallest 4th/5th router logit gap of the exact run first.

Measured (6 layers, 8 tokens): 8-bit everywhere flips 7 expert choices (logits rel 0.18, KL 1.8e-2,
0.25 at the flipped positions, 0.04 elsewhere); f16 flips none (rel 2.6e-3, KL 4e-6). The router
logits move by 0.036 after the first layer's 8-bit Q/K/V alone, the 4th/5th gaps are 0.01-0.03.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import replace

import numpy as np

from zinc.api import load
from zinc.backends.cpu import CpuOps
from zinc.gguf.constants import GGMLType
from zinc.synth import write_model
from zinc.synth.presets import get_preset
from zinc.testing.compare import mean_kl, rel_err


def q8(x: np.ndarray) -> np.ndarray:
    """x rounded as the decode matvecs see it: blocks of 32 on 8 bits, d = max|x| / 127."""
    b = x.reshape(*x.shape[:-1], -1, 32)
    d = np.abs(b).max(-1, keepdims=True) / 127
    q = np.floor(np.abs(b) / np.where(d > 0, d, 1) + 0.5) * np.sign(b)
    return (q * d).reshape(x.shape).astype(np.float32)


def f16(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float16).astype(np.float32)


class Rounded(CpuOps):
    """CpuOps whose quantized matmuls see `rnd(x)` where `pick(weight name)`; records the routing."""

    def __init__(self, rnd, pick) -> None:
        super().__init__()
        self.rnd, self.pick, self.routes, self.router_logits = rnd, pick, [], []

    def matmul(self, x, w):
        return super().matmul(self.rnd(x) if w.ggml_type != GGMLType.F32 and self.pick(w.qt.name) else x, w)

    def matmul_experts(self, x, w, ids):
        return super().matmul_experts(self.rnd(x) if self.pick(w.qt.name) else x, w, ids)

    def router_topk(self, logits, k, *args):
        ids, w = super().router_topk(logits, k, *args)
        top = -np.sort(-logits, axis=-1)
        self.routes.append((np.sort(ids, 1), top[:, k - 1] - top[:, k]))
        self.router_logits.append(logits.copy())
        return ids, w


def run(path: str, ids: list[int], rnd, pick) -> tuple[np.ndarray, Rounded]:
    ops = Rounded(rnd, pick)
    return load(path, backend=ops, n_ctx=64).logits(ids), ops


def report(label: str, logits, ops: Rounded, ref, base: Rounded, router: bool = False) -> None:
    flips = [(il, int(t)) for il, ((a, _), (b, _)) in enumerate(zip(base.routes, ops.routes))
             for t in np.nonzero((a != b).any(1))[0]]
    line = (f"{label:28} rel {rel_err(logits, ref):.2e} kl {mean_kl(ref, logits):.2e} | per position "
            + " ".join(f"{rel_err(logits[i], ref[i]):.1e}" for i in range(len(ref))))
    if router:
        line += " | max |d router logit| per layer " + " ".join(
            f"{np.abs(a - b).max():.3f}" for a, b in zip(base.router_logits, ops.router_logits))
    print(line + f" | route flips (layer, token): {flips}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("-n", type=int, default=8)
    ap.add_argument("--by-weight", action="store_true")
    ap.add_argument("--dir", default="/tmp")
    a = ap.parse_args()
    p = replace(get_preset("gpt-oss-20b"), n_layer=a.layers, n_vocab=512, name=f"gpt-oss-20b-{a.layers}l")
    path = os.path.join(a.dir, f"{p.name}-MXFP4_MOE.gguf")
    if not os.path.exists(path):
        write_model(path, p, ftype="MXFP4_MOE", seed=0, from_f32=False)
    ids = [int(i) for i in np.random.default_rng(0).integers(0, 500, a.n)]
    ref, base = run(path, ids, lambda x: x, lambda name: False)
    print("smallest 4th/5th router logit gap per layer:", " ".join(f"{g.min():.3f}" for _, g in base.routes))
    if a.by_weight:
        kinds = [("attn_q", "attn_k", "attn_v"), ("attn_output",), ("ffn_gate_exps", "ffn_up_exps"),
                 ("ffn_down_exps",)]
        for kind in kinds:
            logits, ops = run(path, ids, q8, lambda name, kind=kind: any(f".{s}." in name for s in kind))
            report("8-bit " + "+".join(kind), logits, ops, ref, base, router=True)
        return
    for label, rnd, pick in (("8-bit (decode matvecs)", q8, lambda name: True),
                             ("8-bit dense Q8_0 only", q8, lambda name: "_exps" not in name),
                             ("f16 (prefill GEMMs)", f16, lambda name: True)):
        logits, ops = run(path, ids, rnd, pick)
        report(label, logits, ops, ref, base)


if __name__ == "__main__":
    main()
