"""Does an L2 bulk prefetch (`cp.async.bulk.prefetch.L2`) make a later decode matvec faster, and how fast is it?

    PYTHONPATH=TRIAL/src python bench/cuda_l2_prefetch_check.py --out DIR

For Qwen3-8B's O projection (Q4_K 4096x4096, 9.4 MB; copies rotated past the L2), per call in a replayed
graph of 64 (`cuda_quant_sweep.graph_us`; the recorded JSON came from a graph of 32 timed the same way): the
matvec alone; a spin of S us then the matvec; the prefetch of that copy's weights, the spin, the matvec; the
prefetch alone (chunk sizes), and the prefetch kernel's own time for 16 MB.
Needs a tree with `kernels/prefetch.py`: the session-9 trial, commit 6985db3 (reverted after it), checked out
in TRIAL.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

from zinc.backends.base import QTensor
from zinc.backends.cuda.kernels import mmvq
from zinc.backends.cuda.kernels import prefetch as kpf
from zinc.backends.cuda.weights import CudaWeight
from zinc.gguf.constants import GGMLType
from zinc.gguf.quants import random_blocks

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cuda_quant_sweep import graph_us  # noqa: E402  (per call, a replayed graph of 64 calls)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path("."))
    args = ap.parse_args()
    dev = torch.device("cuda")
    rng = np.random.default_rng(1)
    n, k = 4096, 4096
    qt = QTensor("w", GGMLType.Q4_K, (n, k), random_blocks(GGMLType.Q4_K, n * k, rng, scale=0.05))
    copies = 12
    ws = [CudaWeight(qt, dev) for _ in range(copies)]
    x = torch.randn((1, k), device=dev)
    xqt = mmvq.quantize_x(x)
    y = torch.empty((1, n), device=dev)
    arr = [mmvq.stream_words(w.parts, 12) for w in ws]
    arr = [(a[0], a[1], a[2]) for a in arr]
    sizes = [t.numel() * t.element_size() for t in arr[0]]
    spin_cycles = {4: 7900, 8: 15800, 16: 31600}  # ~1.98 GHz
    state = {"i": 0}

    def nxt():
        state["i"] = (state["i"] + 1) % copies
        return state["i"]

    res = {}
    res["matvec"] = graph_us(lambda: mmvq.matvec(xqt, ws[nxt()].parts, 12, n, k, y))
    for s, cyc in spin_cycles.items():
        res[f"spin{s}"] = graph_us(lambda: torch.cuda._sleep(cyc))
        res[f"spin{s}+matvec"] = graph_us(lambda: (torch.cuda._sleep(cyc), mmvq.matvec(xqt, ws[nxt()].parts, 12, n, k, y)))

        def pf_spin_mv(cyc=cyc):
            i = nxt()
            kpf.l2_prefetch(list(arr[i]), sizes)
            torch.cuda._sleep(cyc)
            mmvq.matvec(xqt, ws[i].parts, 12, n, k, y)
        res[f"prefetch+spin{s}+matvec"] = graph_us(pf_spin_mv)
    for chunk in (4096, 32768, 262144):
        kpf.CHUNK = chunk
        res[f"prefetch9.4MB chunk{chunk}"] = graph_us(lambda: kpf.l2_prefetch(list(arr[nxt()]), sizes))
    kpf.CHUNK = 32768
    big = torch.empty(16 << 20, dtype=torch.uint8, device=dev)
    res["prefetch16MB one range"] = graph_us(lambda: kpf.l2_prefetch([big], [16 << 20]))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "l2-prefetch-check.json").write_text(json.dumps({"gpu": torch.cuda.get_device_name(), "us": res}, indent=1))
    for key, v in res.items():
        print(f"{key:32} {v:8.2f} us")


if __name__ == "__main__":
    main()
