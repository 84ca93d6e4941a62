"""Is the decode's slowdown after some prompt kernels (Qwen3.5-35B-A3B, session 16: tg128 519 fresh, 469 after a
prompt whose experts ran through the grouped GEMM, 519 with the pairs matvec; the kernels' own time unchanged) the
context's local-memory reservation, which a kernel with spills or a deep stack grows and which stays grown?

    python bench/cuda_tg_lmem.py MODEL.gguf [--big-stack-first | --lmem-max-first] [--out DIR]

One process: tg128 fresh; the context's stack-size limit (CU_LIMIT_STACK_SIZE: bytes of local memory a thread);
a 512-token prompt; the limit again and each loaded Triton kernel's registers / spills / shared bytes (the largest
spills); tg128; the limit set back to its first value, tg128; set to 1 KB, tg128. --big-stack-first: the limit set
to 16 KB before the first tg (does a grown reservation alone slow the decode?); --lmem-max-first: the context's
CU_CTX_LMEM_RESIZE_TO_MAX flag set right after the load (cuCtxSetFlags: a grown reservation is kept, not shrunk
back). Session 16's run: fresh 514.8, after a prompt 514.6, after setting the limit to its own value (1 KB) 466.8
(replay 1,933 -> 2,132 us): re-sizing the reservation is what leaves the decode slow. JSON under --out.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))
from cuda_tg_state import loaded_kernels, tg_new_cache  # noqa: E402

from zinc.api import load  # noqa: E402

STACK = 0  # CU_LIMIT_STACK_SIZE


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--big-stack-first", action="store_true")
    ap.add_argument("--lmem-max-first", action="store_true")
    ap.add_argument("--out")
    a = ap.parse_args()
    cuda = ctypes.CDLL("libcuda.so.1")
    m = load(a.model, backend="cuda", n_ctx=4096)
    rng = np.random.default_rng(0)
    rows = []

    def stack() -> int:
        v = ctypes.c_size_t(0)
        cuda.cuCtxGetLimit(ctypes.byref(v), STACK)
        return v.value

    def set_stack(n: int) -> int:
        return cuda.cuCtxSetLimit(STACK, ctypes.c_size_t(n))

    def tg(label: str) -> None:
        rates, us, _, _ = tg_new_cache(m)
        rows.append({"label": label, "tok_s": rates, "replay_gpu_us": us, "stack": stack()})
        print(f"{label:36} {np.mean(rates):7.1f} tok/s  replay {us:7.1f} us  stack limit {stack()} B", flush=True)

    first = stack()
    if a.big_stack_first:
        print("set stack 16 KB:", set_stack(16384))
    if a.lmem_max_first:
        flags = ctypes.c_uint(0)
        cuda.cuCtxGetFlags(ctypes.byref(flags))
        rc = cuda.cuCtxSetFlags(ctypes.c_uint(flags.value | 0x10))
        print("context flags", hex(flags.value), "set LMEM_RESIZE_TO_MAX:", rc)
    tg("fresh")
    cache = m.new_cache(512)
    ids = [int(i) for i in rng.integers(0, m.n_vocab, 512)]
    for _ in range(3):
        cache.reset()
        m.forward(ids, cache, last_only=True)
    torch.cuda.synchronize()
    ks = {(o.name, getattr(o, "n_regs", -1), getattr(o, "n_spills", -1), o.metadata.shared) for o in loaded_kernels()}
    ks = sorted(ks, key=lambda k: -k[2])
    print("kernels by spills (name, regs, spills, shared):", ks[:8], flush=True)
    tg("after pp512")
    print("set stack back:", set_stack(first))
    tg(f"after pp512, stack limit set to {first}")
    print("set stack 1 KB:", set_stack(1024))
    tg("after pp512, stack limit set to 1 KB")
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        name = "tg-lmem" + ("-big-stack-first" if a.big_stack_first else "-lmem-max-first" if a.lmem_max_first else "")
        (Path(a.out) / f"{name}.json").write_text(json.dumps({"model": a.model, "first_stack": first, "rows": rows,
                                                               "kernels": ks}, indent=1))


if __name__ == "__main__":
    main()
