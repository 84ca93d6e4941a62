"""Prefetch the first bytes of weight arrays into the L2 (Hopper's bulk prefetch: `cp.async.bulk.prefetch.L2`).

`l2_prefetch(arrays, nbytes)` asks the L2 for the first nbytes[i] bytes of each of up to four device arrays,
in chunks of CHUNK bytes, one chunk per thread: a launch of a few one-warp programs that issue the requests
and end; the copy engine fetches the lines while other kernels run. It changes no memory, so a kernel that
reads those bytes later computes the same result, only sooner where they arrived in time. On CPU tensors
(Triton's interpreter) nothing is asked.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

CHUNK = 32 << 10  # bytes per request (a multiple of 16)


@triton.jit
def _ask(base, n, c, CHUNK: tl.constexpr, ASM: tl.constexpr):
    """Request chunks c (32,) of the n bytes at base (chunks past the end ask for the first 16 bytes again)."""
    off = c.to(tl.int64) * CHUNK
    ok = off < n
    size = tl.where(ok, tl.minimum(n - off, CHUNK), 16).to(tl.int32) // 16 * 16
    p = base + tl.where(ok, off, 0)
    if ASM:
        tl.inline_asm_elementwise("cp.async.bulk.prefetch.L2.global [$1], $2;\n\tmov.u32 $0, 0;", "=r,l,r",
                                  [p, size], dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def l2_prefetch_kernel(a, na, b, nb, c, nc, d, nd, CHUNK: tl.constexpr, ASM: tl.constexpr):
    """grid (cdiv(max chunks, 32),): program i asks for chunks 32i + [0, 32) of each of the four ranges."""
    ch = tl.program_id(0) * 32 + tl.arange(0, 32)
    _ask(a, na, ch, CHUNK, ASM)
    _ask(b, nb, ch, CHUNK, ASM)
    _ask(c, nc, ch, CHUNK, ASM)
    _ask(d, nd, ch, CHUNK, ASM)


def l2_prefetch(arrays: list[torch.Tensor], nbytes: list[int]) -> None:
    """Ask the L2 for the first nbytes[i] (>= 16) bytes of each of up to four arrays (16-byte aligned)."""
    assert 0 < len(arrays) <= 4 and len(nbytes) == len(arrays)
    args = []
    for i in range(4):
        t, n = (arrays[i], nbytes[i]) if i < len(arrays) else (arrays[0], 16)
        args += [t.view(torch.uint8) if t.dtype != torch.uint8 else t, int(n)]
    chunks = max(triton.cdiv(n, CHUNK) for n in nbytes)
    l2_prefetch_kernel[(triton.cdiv(chunks, 32),)](*args, CHUNK=CHUNK, ASM=arrays[0].is_cuda, num_warps=1)
