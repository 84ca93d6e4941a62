"""Which prompt kernel leaves the decode slow? (session 17: Qwen3-8B tg128 460.8 after pp512 + pp2048 in one process,
487.7 after pp512 alone in s16; Qwen3.5 519 fresh, 472 after prompts; `cuCtxSetLimit` of the stack size, even to its
own value, does it too, and a graph captured afterwards is as slow: bench/cuda_tg_lmem.py.)

    python bench/cuda_tg_trigger.py MODEL.gguf [--lengths 512,1024,2048,4096] [--out DIR]

One process: tg128 fresh (GPU µs a replay of the captured step too), then for each prompt length in turn one prompt
on its own cache under the profiler and tg128 again on a new 128-cell cache. Per prompt it prints the kernel names
(first 60 characters) that no earlier step launched and the Triton kernels first loaded in it (name, registers,
spill bytes): the first prompt after which the replay is slower holds the trigger among them. JSON under --out.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).parent))
from cuda_step_profile import kernel_rows  # noqa: E402
from cuda_tg_state import loaded_kernels, tg_new_cache  # noqa: E402

from zinc.api import load  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--lengths", default="512,1024,2048,4096")
    ap.add_argument("--out")
    a = ap.parse_args()
    lengths = [int(v) for v in a.lengths.split(",")]
    m = load(a.model, backend="cuda", n_ctx=max(lengths) + 8)
    rng = np.random.default_rng(0)
    rows, seen, loaded = [], set(), set()

    def new_triton() -> list[tuple]:
        ks = {id(o): (o.name, getattr(o, "n_regs", -1), getattr(o, "n_spills", -1)) for o in loaded_kernels()}
        new = [ks[i] for i in ks.keys() - loaded]
        loaded.update(ks)
        return sorted(new)

    def tg(label: str, new: list[str], triton_new: list[tuple]) -> None:
        rates, us, _, _ = tg_new_cache(m)
        rows.append({"after": label, "tok_s": rates, "replay_gpu_us": us, "new_kernels": new,
                     "new_triton": triton_new})
        print(f"{label:14} {np.mean(rates):7.1f} tok/s  replay {us:7.1f} us\n  new kernels: {new}\n  new Triton "
              f"(name, regs, spills): {triton_new}", flush=True)
        new_triton()  # the decode's own loads are not the next prompt's

    tg("fresh", [], [])
    for n in lengths:
        cache = m.new_cache(n + 8)
        ids = [int(i) for i in rng.integers(0, m.n_vocab, n)]
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            m.forward(ids, cache, last_only=True)
            torch.cuda.synchronize()
        names = {name for name, _, _ in kernel_rows(prof, 1)[0]}
        new = sorted(names - seen)
        seen |= names
        tg(f"pp{n}", new, new_triton())
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        (Path(a.out) / "tg-trigger.json").write_text(json.dumps({"model": a.model, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
