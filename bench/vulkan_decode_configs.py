"""Vulkan decode speed per matvec configuration set, on one loaded model.

    python bench/vulkan_decode_configs.py MODEL.gguf [--tokens 128]

For each variant below (changes to `VulkanOps.matvec`, `.matvec_xs`, `.matvec_shapes`) the recorded
decode step is dropped and recorded again, then greedy decode of --tokens tokens after a 4-token
prompt is timed (median of 3); the first variant (the defaults) is repeated last to show drift.
Also checks that every variant picks the same tokens as the defaults.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from zinc.api import load

Q4_ROWS = {("mvq", "Q4_K", 6144, 4096): (32, 2, 8, False)}
Q6 = {("mvq", "Q6_K", 1024, 4096): (32, 1, 2, False), ("mvq", "Q6_K", 4096, 12288): (32, 1, 1, False),
      ("mvq", "Q6_K", 151936, 4096): (16, 1, 4, False)}
XS = {("mvq", "Q4_K", 4096, 4096): (8, 1, 16, True), ("mvq", "Q4_K", 1024, 4096): (32, 1, 8, True)}
VARIANTS = {
    "defaults": ({}, {}, {}),
    "glu (32,1,4)": ({"mvq_glu": (32, 1, 4)}, {}, {}),
    "glu (32,1,1)": ({"mvq_glu": (32, 1, 1)}, {}, {}),
    "glu (32,1,8) xs": ({"mvq_glu": (32, 1, 8)}, {"mvq_glu": True}, {}),
    "glu (32,1,4) mvq (32,1,4)": ({"mvq_glu": (32, 1, 4), "mvq": (32, 1, 4)}, {}, {}),
    "q6 shapes": ({}, {}, Q6),
    "xs shapes": ({}, {}, XS),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--allow-cpu", action="store_true")
    a = ap.parse_args()
    m = load(a.model, backend="vulkan", n_ctx=512, allow_cpu_adapter=a.allow_cpu)
    ops = m.ops
    base = (dict(ops.matvec), dict(ops.matvec_xs), dict(ops.matvec_shapes))
    ref = None
    names = [n for v in VARIANTS for n in ("defaults", v) if v != "defaults"] + ["defaults"]
    for name in names * 2:
        mv, xs, shapes = VARIANTS[name]
        ops.matvec, ops.matvec_xs, ops.matvec_shapes = {**base[0], **mv}, {**base[1], **xs}, {**base[2], **shapes}
        ops._replayer = None  # record the step again with these kernels
        cache = m.new_cache()
        m.forward([1, 2, 3, 4], cache)
        toks = m.greedy(5, cache, 8)
        ts = []
        for _ in range(3):
            cache.truncate(4)
            t0 = time.perf_counter()
            toks = m.greedy(5, cache, a.tokens)
            ts.append(time.perf_counter() - t0)
        ref = ref if ref is not None else toks
        same = sum(x == y for x, y in zip(toks, ref))
        print(f"{name:28s} {a.tokens / float(np.median(ts)):7.1f} tok/s  (tokens as defaults: {same}/{len(ref)})",
              flush=True)


if __name__ == "__main__":
    main()
