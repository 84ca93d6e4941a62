"""Is the decode's slowdown after big f16 cuBLAS products (session 15: replay 2,037 -> 2,156 us a step, the kernels'
own time unchanged) the multiprocessors' L1 / shared-memory split? And does it pass with time?

    python bench/cuda_tg_carveout.py MODEL.gguf [--variant V] [--out DIR]

One process: tg128 fresh; with every loaded Triton kernel's preferred carveout set to 0 (most L1) and to 100 (most
shared memory), graphs recaptured; back to the default; then after 512x4096x12288 f16 products: tg, after 5 s idle,
and with each carveout again (--variant sequence, the session-15 run). The slow state is sticky, so the other
variants each want a fresh process and set something before the first f16 product: control (nothing), l1-first /
half-first (every Triton kernel's carveout 0 / 50 after a first tg), ctx-l1 (the context's cache config "prefer L1",
cuCtxSetCacheConfig, right after the load). Per tg: tok/s and the captured step's replay time (events). JSON under
--out.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
from triton.compiler.compiler import CompiledKernel

sys.path.insert(0, str(Path(__file__).parent))
from cuda_tg_state import replay_times, tg_rates  # noqa: E402

from zinc.api import load  # noqa: E402

CARVEOUT = 9  # CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT
PREFER_L1 = 2  # CU_FUNC_CACHE_PREFER_L1
VARIANTS = ("sequence", "control", "l1-first", "half-first", "ctx-l1")


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
        ks = [o for o in gc.get_objects() if isinstance(o, CompiledKernel) and getattr(o, "function", None)]
        bad = sum(cuda.cuFuncSetAttribute(ctypes.c_void_p(k.function), CARVEOUT, ctypes.c_int(v)) != 0 for k in ks)
        m.ops._graphs = None  # recapture: kernel nodes keep the attributes they were instantiated with
        return len(ks) - bad

    def tg(label: str) -> None:
        cache = m.new_cache(128)
        rates = tg_rates(m, cache)
        us = replay_times(m, cache)[0]
        rows.append({"label": label, "tok_s": rates, "replay_gpu_us": us})
        print(f"{label:40} {np.mean(rates):7.1f} tok/s  replay {us:7.1f} us", flush=True)

    def products() -> None:
        a16 = torch.randn(512, 4096, device="cuda", dtype=torch.float16)
        b16 = torch.randn(12288, 4096, device="cuda", dtype=torch.float16)
        for _ in range(3):
            (a16 @ b16.t()).float().sum().item()

    tg("fresh")
    if a.variant == "sequence":
        ks = [o for o in gc.get_objects() if isinstance(o, CompiledKernel) and getattr(o, "function", None)]
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
