"""What a decode step would gain if a launch of it were fused away: the captured greedy step's replay time with
one kind of launch left out (its output is then stale: timing only, the tokens are meaningless).

    python bench/cuda_skip_ceiling.py MODEL.gguf --skip NAME [--out DIR]

NAME: none; glu_quant (the quantize launch of the GLU output before the down projection); argmax (the first
argmax pass: the greedy pick reads stale partial maxima); embed (the token's embedding row); attn (the decode
attention: its output and 8-bit copy stale); norm (every residual add + RMS norm + quantize); the matvecs of
Qwen3-8B's shapes: qkv, o, glu, down, lm_head. One process a
variant; prints the replay's GPU µs (`cuda_tg_state.replay_times`: events over 200 replays, after 20) on a
128-cell cache.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from cuda_tg_state import replay_times
from zinc.api import load
from zinc.backends.cuda import ops as cops
from zinc.backends.cuda.kernels import elementwise as kel
from zinc.backends.cuda.kernels import mmvq


def patch(skip: str) -> None:
    memo: dict = {}

    def static(key, make):
        if key not in memo:
            memo[key] = make()
        return memo[key]

    if skip == "glu_quant":
        real_q = mmvq.quantize_x

        def quantize_x(x2, pdl=(0, 0), **kw):
            return static(("q", tuple(x2.shape)), lambda: real_q(x2.clone()))
        mmvq.quantize_x = quantize_x
    elif skip == "argmax":
        real = kel.greedy_next_kernel

        def greedy_next(logits, tokens, pos, chosen, count, block=kel.ARGMAX_BLOCK):
            parts = -(-logits.numel() // block)
            best, where = static("parts", lambda: (torch.linspace(0, 1, parts, device=logits.device),
                                                   torch.arange(parts, dtype=torch.int32, device=logits.device)))
            real[(1,)](best, where, parts, logits.numel(), tokens, pos, chosen, count, NP=64, num_warps=4)
        kel.greedy_next = greedy_next
    elif skip == "embed":
        orig = cops.CudaOps.embed

        def embed(self, w, ids):
            if ids.numel() != 1:
                return orig(self, w, ids)
            return static("embed", lambda: orig(self, w, ids).clone())
        cops.CudaOps.embed = embed
    elif skip == "attn":
        orig = cops.CudaOps._decode_attention

        def attn(self, q, *a, **kw):
            out, q8 = static(("attn", tuple(q.shape)), lambda: (orig(self, q, *a, **kw).clone(), self._qx[0][1:]))
            self._keep_q8(out, q8)
            return out
        cops.CudaOps._decode_attention = attn
    elif skip == "norm":
        orig = cops.CudaOps.add_rms_norm

        def add_rms_norm(self, x, r, w, eps):
            if x.shape[0] != 1:
                return orig(self, x, r, w, eps)
            s, out, q8 = static(("n", id(w)), lambda: (*orig(self, x, r, w, eps), self._qx[0][1:]))
            self._keep_q8(out, q8)
            return s, out
        cops.CudaOps.add_rms_norm = add_rms_norm
    elif skip in MATVECS:
        which = MATVECS[skip]
        for name in ("matmul", "matmuls", "matmul_glu"):
            orig_m = getattr(cops.CudaOps, name)

            def skipped(self, x, w, *a, _orig=orig_m, _name=name):
                ws = w if isinstance(w, list) else [w]
                if x.shape[0] != 1 or not which(_name, ws):
                    return _orig(self, x, w, *a)
                return static((_name, id(ws[0])), lambda: _clone(_orig(self, x, w, *a)))
            setattr(cops.CudaOps, name, skipped)
    else:
        assert skip == "none", skip


def _clone(y):
    return [t.clone() for t in y] if isinstance(y, list) else y.clone()


# which matvec launches `--skip` leaves out (Qwen3-8B shapes): (op name, weights) -> bool
MATVECS = {
    "qkv": lambda op, ws: op == "matmuls",
    "o": lambda op, ws: op == "matmul" and ws[0].k == 4096 and ws[0].rows == 4096,
    "glu": lambda op, ws: op == "matmul_glu",
    "down": lambda op, ws: op == "matmul" and ws[0].k == 12288,
    "lm_head": lambda op, ws: op == "matmul" and ws[0].rows > 100000,
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--skip", default="none")
    ap.add_argument("--out")
    a = ap.parse_args()
    patch(a.skip)
    m = load(a.model, backend="cuda", n_ctx=512)
    cache = m.new_cache(128)
    m.greedy(1, cache, 4)
    replay_times(m, cache, 20)  # warm
    us, _ = replay_times(m, cache, 200)
    print(f"skip {a.skip:10} replay {us:8.1f} us  ({torch.cuda.get_device_name()})")
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        (Path(a.out) / f"skip-{a.skip}.json").write_text(json.dumps({"skip": a.skip, "replay_us": us}))


if __name__ == "__main__":
    main()
