"""Is the decode's slowdown after big f16 cuBLAS products (session 15: replay 2,037 -> 2,156 us a step, the kernels'
own time unchanged) the multiprocessors' L1 / shared-memory split? And does it pass with time?

    python bench/cuda_tg_carveout.py MODEL.gguf [--variant V] [--out DIR]

One process: tg128 fresh; with every loaded Triton kernel's preferred carveout set to 0 (most L1) and to 100 (most
shared memory), graphs recaptured; back to the default; then after 512x4096x12288 f16 products: tg, after 5 s idle,
and with each carveout again (--variant sequence, the session-15 run). The slow state is sticky, so the other
variants each want a fresh process and set something before the first f16 product: control (nothing), l1-first /
half-first (every Triton kernel's carveout 0 / 50 after a first tg), ctx-l1 (the context's cache config "prefer L1",
cuCtxSetCacheConfig, right after the load); and what kind of product leaves it slow: f32-products (the same sizes in
f32 through cuBLAS), triton-products (f16, a Triton tile product). Per tg: tok/s, the captured step's replay time
(events) and the SM clocks nvidia-smi saw meanwhile. JSON under --out.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch
import triton
import triton.language as tl

sys.path.insert(0, str(Path(__file__).parent))
from cuda_tg_state import loaded_kernels, replay_times, tg_rates  # noqa: E402

from zinc.api import load  # noqa: E402

CARVEOUT = 9  # CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT
PREFER_L1 = 2  # CU_FUNC_CACHE_PREFER_L1
VARIANTS = ("sequence", "control", "l1-first", "half-first", "ctx-l1", "f32-products", "triton-products")


def sm_clocks(proc) -> list[int]:
    """The SM clocks (MHz) an `nvidia-smi -lms` sampler printed, once it is stopped."""
    proc.terminate()
    out = proc.communicate()[0]
    return [int(v) for v in out.split() if v.strip().isdigit()]


@triton.jit
def _gemm_kernel(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """c = a @ b.T for f16 a (M, K), b (N, K), contiguous, M, N, K multiples of the blocks: a plain tensor-core
    tile product whose shared memory Triton chooses (the f16 products' stand-in without cuBLAS)."""
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + k + rk[None, :])
        w = tl.load(b + rn[:, None] * K + k + rk[None, :])
        acc += tl.dot(x, tl.trans(w))
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--variant", default="sequence", choices=VARIANTS)
    ap.add_argument("--out")
    a = ap.parse_args()
    cuda = ctypes.CDLL("libcuda.so.1")
    m = load(a.model, backend="cuda", n_ctx=4096)
    rows = []
    if a.variant == "ctx-l1":
        print("cuCtxSetCacheConfig(prefer L1):", cuda.cuCtxSetCacheConfig(ctypes.c_int(PREFER_L1)))

    def carveout(v: int) -> int:
        ks = loaded_kernels()
        bad = sum(cuda.cuFuncSetAttribute(ctypes.c_void_p(k.function), CARVEOUT, ctypes.c_int(v)) != 0 for k in ks)
        m.ops._graphs = None  # recapture: kernel nodes keep the attributes they were instantiated with
        return len(ks) - bad

    def tg(label: str) -> None:
        cache = m.new_cache(128)
        smi = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm", "--format=csv,noheader,nounits", "-lms", "50"],
                               stdout=subprocess.PIPE, text=True)
        rates = tg_rates(m, cache)
        us = replay_times(m, cache)[0]
        mhz = sm_clocks(smi)
        rows.append({"label": label, "tok_s": rates, "replay_gpu_us": us, "sm_mhz": mhz})
        print(f"{label:40} {np.mean(rates):7.1f} tok/s  replay {us:7.1f} us  SM MHz {min(mhz, default=0)}-"
              f"{max(mhz, default=0)}", flush=True)

    def products() -> None:
        dt = torch.float32 if a.variant == "f32-products" else torch.float16
        a16 = torch.randn(512, 4096, device="cuda", dtype=dt)
        b16 = torch.randn(12288, 4096, device="cuda", dtype=dt)
        for _ in range(3):
            if a.variant == "triton-products":
                c = torch.empty(512, 12288, device="cuda", dtype=dt)
                k = _gemm_kernel[(512 // 128, 12288 // 128)](a16, b16, c, 512, 12288, 4096, BM=128, BN=128, BK=64,
                                                             num_warps=8, num_stages=3)
                print("triton product shared bytes:", k.metadata.shared)
                c.float().sum().item()
            else:
                (a16 @ b16.t()).float().sum().item()

    tg("fresh")
    if a.variant == "sequence":
        ks = loaded_kernels()
        print("kernels (shared bytes):", sorted({(k.name[:40], k.metadata.shared) for k in ks}, key=lambda x: -x[1])[:12])
        for v in (0, 100):
            n = carveout(v)
            tg(f"fresh, carveout {v} ({n} kernels)")
        carveout(-1)
        tg("fresh, carveout default")
        products()
        tg("after f16 products")
        time.sleep(5)
        tg("after f16 products, 5 s idle")
        for v in (0, 100, -1):
            carveout(v)
            tg(f"after f16 products, carveout {v}")
    else:
        if a.variant in ("l1-first", "half-first"):
            v = 0 if a.variant == "l1-first" else 50
            n = carveout(v)
            tg(f"fresh, carveout {v} ({n} kernels)")
        products()
        tg(f"{a.variant}: after f16 products")
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        name = "tg-carveout" + ("" if a.variant == "sequence" else f"-{a.variant}")
        (Path(a.out) / f"{name}.json").write_text(json.dumps({"model": a.model, "variant": a.variant, "rows": rows},
                                                              indent=1))


if __name__ == "__main__":
    main()
