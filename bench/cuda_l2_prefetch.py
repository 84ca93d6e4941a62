"""Experiment: the next matvec's weights asked into the L2 while latency-bound kernels run (a side branch of the graph).

    python bench/cuda_l2_prefetch.py [--out DIR]    # GPU
    python bench/cuda_l2_prefetch.py --ptx          # offline: the prefetch kernel compiles for sm_90

A decode layer's small kernels (norm + quantize, attention on a short cache, the combine, the GLU's quantize) leave
the memory idle for about 13 µs a layer. Here a one-warp kernel on a forked stream issues
`cp.async.bulk.prefetch.L2` over the first bytes of the next matvec's weight arrays while a chain of `norm_quantize`
launches stands in for those kernels; the matvec waits for both. Timed in a replayed CUDA graph (weight copies
rotated past the L2), µs an iteration: the chain + matvec without the branch, with it (fractions of the weights,
chunk sizes, programs), and the matvec alone on hot (L2-resident) and cold weights. Prints a table, writes
DIR/l2-prefetch.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from cuda_mmvq_sweep import bench_us  # noqa: E402


@triton.jit
def _pick(p0, n0, p1, n1, p2, n2, a: tl.constexpr):
    if a == 0:
        return p0, n0
    elif a == 1:
        return p1, n1
    else:
        return p2, n2


@triton.jit
def l2_prefetch_kernel(p0, n0, p1, n1, p2, n2, dummy, CH: tl.constexpr):
    """Ask the L2 for bytes [0, n_i) of the arrays p_i (16-byte aligned), CH bytes an instruction, lanes and
    programs over the instructions; nothing is stored (the dummy store's mask is never true)."""
    lane = tl.arange(0, 32)
    for a in tl.static_range(3):
        base, nb = _pick(p0, n0, p1, n1, p2, n2, a)
        n_ins = tl.cdiv(nb, CH)
        for i0 in range(tl.program_id(0) * 32, n_ins, tl.num_programs(0) * 32):
            i = i0 + lane
            off = i.to(tl.int64) * CH
            size = tl.where(i < n_ins, tl.minimum(nb - off, CH), 0).to(tl.int32) & -16
            r = tl.inline_asm_elementwise(
                "{ .reg .pred p; setp.gt.s32 p, $2, 0; @p cp.async.bulk.prefetch.L2.global [$1], $2; mov.u32 $0, 0; }",
                "=r,l,r", [base + off, size], dtype=tl.int32, is_pure=False, pack=1)
            tl.store(dummy + lane, r, mask=r != 0)


@triton.jit
def l2_lines_kernel(p0, n0, p1, n1, p2, n2, dummy, BLOCK: tl.constexpr):
    """The same with `prefetch.global.L2`, one 128-byte line a thread and instruction."""
    lane = tl.arange(0, BLOCK)
    for a in tl.static_range(3):
        base, nb = _pick(p0, n0, p1, n1, p2, n2, a)
        lines = tl.cdiv(nb, 128)
        for i0 in range(tl.program_id(0) * BLOCK, lines, tl.num_programs(0) * BLOCK):
            i = i0 + lane
            ok = (i < lines).to(tl.int32)
            r = tl.inline_asm_elementwise(
                "{ .reg .pred p; setp.ne.s32 p, $2, 0; @p prefetch.global.L2 [$1]; mov.u32 $0, 0; }",
                "=r,l,r", [base + i.to(tl.int64) * 128, ok], dtype=tl.int32, is_pure=False, pack=1)
            tl.store(dummy + lane, r, mask=r != 0)


def prefetch(arrays, frac: float, dummy, ch: int = 16384, progs: int = 1) -> None:
    """The first frac of each of (up to 3) tensors' bytes into the L2."""
    arrays = [t.reshape(-1).view(torch.uint8) for t in arrays]
    assert 0 < len(arrays) <= 3 and all(t.data_ptr() % 16 == 0 for t in arrays)
    args = []
    for j in range(3):
        t = arrays[min(j, len(arrays) - 1)]
        args += [t, int(t.numel() * frac) if j < len(arrays) else 0]
    if ch == 128:  # per line, 4 warps a program
        l2_lines_kernel[(progs,)](*args, dummy, BLOCK=128, num_warps=4)
    else:
        l2_prefetch_kernel[(progs,)](*args, dummy, CH=ch, num_warps=1)


def ptx_check() -> None:
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    src = ASTSource(fn=l2_prefetch_kernel, signature={"p0": "*u8", "n0": "i64", "p1": "*u8", "n1": "i64", "p2": "*u8",
                                                      "n2": "i64", "dummy": "*i32", "CH": "constexpr"},
                    constexprs={"CH": 16384})
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32))
    ptx = k.asm["ptx"]
    print("cp.async.bulk.prefetch in PTX:", ptx.count("cp.async.bulk.prefetch"), "; cubin bytes", len(k.asm["cubin"]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--ptx", action="store_true")
    a = ap.parse_args()
    if a.ptx:
        ptx_check()
        return
    import numpy as np

    from zinc.backends.base import QTensor
    from zinc.backends.cuda.kernels import mmvq
    from zinc.backends.cuda.weights import CudaWeight
    from zinc.gguf.constants import GGMLType
    from zinc.gguf.quants import random_blocks

    dev = torch.device("cuda")
    dummy = torch.zeros(32, dtype=torch.int32, device=dev)
    side = torch.cuda.Stream()
    k = 4096
    x = torch.randn((1, k), device=dev)
    nw = torch.rand(k, device=dev) + 0.5
    nout = torch.empty_like(x)
    res = {}
    lines = []
    # (name, N, K, glu, chain length (norm_quantize launches))
    for name, n, kk, glu, chain in (("O 4096x4096", 4096, 4096, False, 3), ("QKV 6144x4096", 6144, 4096, False, 1),
                                     ("GLU 2x12288x4096", 12288, 4096, True, 1),
                                     ("down 4096x12288", 4096, 12288, False, 1)):
        rng = np.random.default_rng(n)
        qts = [QTensor(f"w{i}", GGMLType.Q4_K, (n, kk), random_blocks(GGMLType.Q4_K, n * kk, rng, scale=0.05))
               for i in range(2 if glu else 1)]
        nbytes = len(qts) * n * kk * 144 // 256
        copies = min(16, max(2, -(-200_000_000 // nbytes)))
        ws = [[CudaWeight(q, dev) for q in qts] for _ in range(copies)]
        xin = torch.randn((1, kk), device=dev)
        xqt = mmvq.quantize_x(xin)
        y = torch.empty((1, n), device=dev)
        it = iter(range(1 << 30))
        # the arrays mmvs reads (qs, sm4, dm) of each weight
        arrs = [[a for w in c for a in mmvq.words(w.parts, 12, True)[:3]] for c in ws]

        def mv(w):
            mmvq.matvec(xqt, w[0].parts, 12, n, kk, y, glu=(w[1].parts, 0) if glu else None)

        def run(frac=0.0, ch=16384, progs=1, hot=False, do_chain=True, do_mv=True):
            i = 0 if hot else next(it) % copies
            if frac > 0:
                ev = torch.cuda.Event()
                ev.record()
                side.wait_event(ev)
                with torch.cuda.stream(side):
                    for j in range(0, len(arrs[i]), 3):
                        prefetch(arrs[i][j:j + 3], frac, dummy, ch, progs)
                    ev2 = torch.cuda.Event()
                    ev2.record()
            if do_chain:
                for _ in range(chain):
                    mmvq.norm_quantize(x, nw, 1e-6, nout)
            if frac > 0:
                torch.cuda.current_stream().wait_event(ev2)
            if do_mv:
                mv(ws[i])

        cases = [("matvec alone, cold", dict(do_chain=False)), ("matvec alone, hot", dict(do_chain=False, hot=True)),
                 (f"{chain} nq + matvec", {})]
        var = ((8192, 32), (8192, 128), (32768, 132), (128, 32), (128, 132))
        cases += [(f"{chain} nq + matvec, prefetch {f:.2f} ch {ch} p{p}", dict(frac=f, ch=ch, progs=p))
                  for f in (0.5, 1.0) for ch, p in var]
        cases += [(f"prefetch 1.00 alone ch {ch} p{p}", dict(frac=1.0, ch=ch, progs=p, do_chain=False, do_mv=False))
                  for ch, p in var]
        out = {}
        for rep in range(2):
            for cname, kw in cases:
                out.setdefault(cname, []).append(bench_us(lambda kw=kw: run(**kw), 60))
        want = torch.empty_like(y)
        mv(ws[0])
        want.copy_(y)
        run(frac=1.0)
        torch.cuda.synchronize()
        assert torch.equal(want, y), "the prefetch changed the matvec's result"
        res[name] = out
        for cname, v in out.items():
            lines.append(f"{name:18} {cname:46} {min(v):7.2f} us  ({', '.join(f'{t:.2f}' for t in v)})")
            print(lines[-1], flush=True)
    nq = bench_us(lambda: mmvq.norm_quantize(x, nw, 1e-6, nout), 60)
    lines.append(f"one norm_quantize alone {nq:.2f} us")
    print("\n".join(lines))
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        (Path(a.out) / "l2-prefetch.json").write_text(json.dumps({"us": res, "norm_quantize_us": nq}, indent=1))


if __name__ == "__main__":
    main()
