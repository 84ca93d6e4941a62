"""The decode attention with the rope (one token, Qwen3-8B's shape) in two source trees and at several forms.

    python bench/cuda_attn_fused.py --old OLD_ATTENTION_PY [--out DIR]     (on a GPU)

For each cache size (cells; the tokens in use just under it), each form: a CUDA graph of 36 "layers" (their
own caches, queries, keys and values), each layer behind a 64 MB read so its cells come from memory as in a decode
step (`cuda_mmvq_sweep.bench_us`); µs a layer is that less the reads' own time, over 36. The old tree's kernel
(`--old`: a copy of kernels/attention.py to import beside this tree's) runs at its own splits; this tree's in
every form of CASES (splits, cells a step, stages, warps; 1 split: the split program writes the output, no
combine). Every form's output and cells are checked against the old form at that tree's default split. Prints a
table; writes DIR/attn-fused.json.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cuda_mmvq_sweep import bench_us  # noqa: E402

from zinc.backends.cuda.kernels import attention as kattn  # noqa: E402
from zinc.backends.cuda.kernels import mmvq  # noqa: E402
from zinc.backends.cuda.ops import attention_config  # noqa: E402

LAYERS = 36
CASES = [  # (cells, cells in use, this tree's forms: (splits, cells a step, stages, warps))
    (128, 100, [(8, 64, 3, 4), (2, 64, 3, 4), (1, 64, 3, 4), (2, 32, 3, 4), (4, 32, 3, 4), (2, 64, 2, 4),
                (2, 64, 3, 8)]),
    (1024, 900, [(8, 64, 3, 4), (16, 64, 3, 4), (16, 32, 3, 4), (8, 64, 3, 8)]),
    (16512, 16448, [(32, 64, 3, 4), (32, 64, 2, 4), (64, 64, 2, 4), (32, 32, 3, 4), (64, 32, 3, 4), (32, 128, 2, 4),
                    (16, 64, 3, 4), (32, 64, 3, 8), (16, 64, 3, 8), (16, 128, 2, 8)])]


def timed(fn, flush) -> float:
    """µs a layer: the GPU time of all layers, each behind its flush, less that of the flushes alone."""
    def both():
        for i in range(LAYERS):
            flush()
            fn(i)

    def only():
        for _ in range(LAYERS):
            flush()

    return (bench_us(both, rep=100) - bench_us(only, rep=100)) / LAYERS


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", required=True)
    ap.add_argument("--out", type=Path, default=Path("."))
    a = ap.parse_args()
    spec = importlib.util.spec_from_file_location("attention_old", a.old)
    old = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(old)
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(0)
    Hq, Hk, D = 32, 8, 128
    junk = torch.randn(16 << 20, device=dev)
    flush = lambda: junk.sum()  # noqa: E731  (reads 64 MB: the cells come from memory, no dirty lines left)
    c = torch.pow(1e6, -torch.arange(0, 64, device=dev, dtype=torch.float32) / 64)
    rows = []
    for S, n, splits in CASES:
        r = lambda *s: torch.randn(*s, device=dev, generator=g)  # noqa: E731
        L = [dict(q=r(1, Hq, D), k=r(1, Hk, D), v=r(1, Hk, D), qw=r(D), kw=r(D), ck=r(S, Hk, D).half(),
                  cv=r(S, Hk, D).half()) for _ in range(LAYERS)]
        cp = torch.full((S,), -1, dtype=torch.int32, device=dev)
        cp[:n] = torch.arange(n, device=dev, dtype=torch.int32)
        pos = torch.tensor([n], dtype=torch.int32, device=dev)
        out = torch.empty((LAYERS, 1, Hq, D), device=dev)
        q8 = [mmvq.q8_buffers(1, Hq * D, dev) for _ in range(LAYERS)]

        def run(mod, ns, bs, i, lay=L, cpos=cp, st=3, w=None):
            x = lay[i]
            scratch = (torch.empty(Hq * ns, device=dev), torch.empty(Hq * ns, device=dev),
                       torch.empty((Hq * ns, D), device=dev))
            mod.decode_attention(x["q"], x["ck"], x["cv"], pos, cpos, S, 0.088, 0, 0.0, None, scratch, out[i],
                                 nsplit=ns, bs=bs, stages=st, warps=w, exact=False, q8=q8[i],
                                 rope=(x["qw"], x["k"], x["kw"], x["v"], c, None, 1e-6, 1.0, D, True, True))

        ns0, bs0 = attention_config(S)[:2]
        # correctness: old at the default split vs every new form, on copies of one layer's cells
        base = {k: v.clone() for k, v in L[0].items()}

        def once(mod, ns, bs, st=3, w=None):
            lay = [{k: v.clone() for k, v in base.items()}]
            cpos = cp.clone()
            run(mod, ns, bs, 0, lay, cpos, st, w)
            torch.cuda.synchronize()
            return out[0].clone(), lay[0]["ck"][n].clone(), q8[0][0].clone()

        want = once(old, ns0, bs0)
        for ns, bs, st, w in splits:
            got = once(kattn, ns, bs, st, w)
            err = float((got[0] - want[0]).abs().max() / want[0].abs().max())
            assert err < 1e-3 and torch.equal(got[1], want[1]), (S, ns, err)
            agree = float((got[2] == want[2]).float().mean())
            us = timed(lambda i, c=(ns, bs, st, w): run(kattn, c[0], c[1], i, st=c[2], w=c[3]), flush)
            rows.append(dict(cells=S, used=n, tree="new", nsplit=ns, bs=bs, stages=st, warps=w, us=us,
                             max_rel_err=err, q8_agree=agree))
            print(f"cells {S:6d} new  splits {ns:3d} bs {bs:3d} stages {st} warps {w}  {us:7.2f} us  (err {err:.1e}, "
                  f"8-bit words equal {agree:.3f})", flush=True)
        us = timed(lambda i: run(old, ns0, bs0, i), flush)
        rows.append(dict(cells=S, used=n, tree="old", nsplit=ns0, bs=bs0, us=us))
        print(f"cells {S:6d} old  splits {ns0:3d}  {us:7.2f} us", flush=True)
        del L
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "attn-fused.json").write_text(json.dumps(dict(gpu=torch.cuda.get_device_name(), rows=rows), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
