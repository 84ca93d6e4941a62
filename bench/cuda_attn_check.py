"""Decode attention on the GPU against the NumPy backend at real head shapes, 1-16 query rows.

    python bench/cuda_attn_check.py          (prints one line per case; exits 1 on a wrong case)
"""

from __future__ import annotations

import sys

import numpy as np

from zinc.backends.cpu import CpuOps
from zinc.backends.cuda.ops import CudaOps
from zinc.testing.compare import rel_err

SHAPES = {"gpt-oss": (64, 8, 64, 128, True), "qwen35": (16, 2, 256, 0, False), "qwen3": (32, 8, 128, 0, False)}


def main() -> int:
    ops, ref, bad = CudaOps(), CpuOps(), 0
    rng = np.random.default_rng(0)
    for name, (hq, hkv, d, window, sinks) in SHAPES.items():
        for kv in ("f16", "f32"):
            for T in (1, 4, 8, 16):
                S, n = 300, 211
                dt = np.float16 if kv == "f16" else np.float32
                k, v = (rng.standard_normal((S, hkv, d)).astype(dt) for _ in range(2))
                kv_pos = np.where(np.arange(S) < n, np.arange(S), -1).astype(np.int32)
                q = rng.standard_normal((T, hq, d)).astype(np.float32)
                q_pos = np.arange(n - T, n, dtype=np.int32)
                snk = rng.standard_normal(hq).astype(np.float32) if sinks else None
                want = ref.attention(q, k, v, q_pos, kv_pos, n, 0.125, window=window, sinks=snk)
                got = ops.to_numpy(ops.attention(*(ops.from_numpy(x) for x in (q, k, v, q_pos, kv_pos)), n, 0.125,
                                                 window=window, sinks=None if snk is None else ops.from_numpy(snk)))
                e = rel_err(got, want)
                bad += e > 1e-3
                print(f"{name:8} kv {kv} T {T:2} rel {e:.2e}{'  <-- WRONG' if e > 1e-3 else ''}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
