"""Where the fused rope costs time in the decode attention's split kernel (`kernels.attention`).

    python bench/cuda_rope_attn_cost.py [--cells N] [--out DIR]     (on a GPU)

Qwen3-8B's attention shape (32 query heads, 8 KV heads, 128 dims, f16 cache of 16896 cells, N cells in use)
for one token: the separate rope launch (`elementwise.rope_qk`) and the decode attention without rope, then
the attention with the rope in its split programs in forms that drop one piece at a time: the per-head norms,
the key write (the cell placed past the extent, so split 0 writes it). Each timed as the median per call of
a replayed CUDA graph of 64 calls (`cuda_quant_sweep.graph_us`); writes DIR/rope-attn-cost.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cuda_quant_sweep import graph_us  # noqa: E402

from zinc.backends.cuda.kernels import attention as kattn  # noqa: E402
from zinc.backends.cuda.kernels import elementwise as kel  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cells", type=int, default=64)
    ap.add_argument("--out", type=Path, default=Path("."))
    a = ap.parse_args()
    dev = torch.device("cuda")
    Hq, Hk, D, S, n = 32, 8, 128, 16896, a.cells
    g = torch.Generator(device=dev).manual_seed(0)
    r = lambda *s: torch.randn(*s, device=dev, generator=g)  # noqa: E731
    q, k, v, qw, kw = r(1, Hq, D), r(1, Hk, D), r(1, Hk, D), r(D), r(D)
    ck, cv = r(S, Hk, D).half(), r(S, Hk, D).half()
    cp = torch.full((S,), -1, dtype=torch.int32, device=dev)
    cp[:n] = torch.arange(n, device=dev, dtype=torch.int32)
    pos = torch.tensor([n - 1], dtype=torch.int32, device=dev)
    slots = pos.clone()
    far = torch.tensor([S - 1], dtype=torch.int32, device=dev)  # past the extent: split 0 writes it
    c = torch.pow(1e6, -torch.arange(0, 64, device=dev, dtype=torch.float32) / 64)
    nsplit, bs = 32, 64
    out = torch.empty((1, Hq, D), device=dev)
    scratch = (torch.empty(Hq * nsplit, device=dev), torch.empty(Hq * nsplit, device=dev),
               torch.empty((Hq * nsplit, D), device=dev))
    qo = torch.empty_like(q)

    def attn(rope=None):
        kattn.decode_attention(q, ck, cv, pos, cp, S, 0.088, 0, 0.0, None, scratch, out, nsplit=nsplit, bs=bs,
                               rope=rope)

    forms = {
        "rope_qk launch alone": lambda: kel.rope_qk(q, k, pos, c, 1.0, D, True, qo, (v, slots, ck, cv, cp, False),
                                                    q_w=qw, k_w=kw, eps=1e-6),
        "attention without rope": lambda: attn(),
        "attention + rope, norms, key write (kept)": lambda: attn((qw, k, kw, v, c, slots, 1e-6, 1.0, D, True, False)),
        "  without the norms": lambda: attn((None, k, None, v, c, slots, 1e-6, 1.0, D, True, False)),
        "  key written by split 0 past the extent": lambda: attn((qw, k, kw, v, c, far, 1e-6, 1.0, D, True, False)),
    }
    res = {}
    for name, fn in forms.items():
        res[name] = graph_us(fn)
        print(f"{name:45s} {res[name]:7.2f} us", flush=True)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "rope-attn-cost.json").write_text(json.dumps(dict(gpu=torch.cuda.get_device_name(), cells=n, us=res),
                                                          indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
