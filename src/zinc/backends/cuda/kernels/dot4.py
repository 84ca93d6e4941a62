"""The integer pieces the 8-bit-activation matvecs share (`mmvq`, `mmvs`): byte masks, the 4-way byte dot
product (`dp4a` on the GPU, shifts and multiplies on CPU tensors in Triton's interpreter), masks that fold away.
"""

from __future__ import annotations

import triton
import triton.language as tl

M4 = tl.constexpr(0x0F0F0F0F)  # the low nibble of each byte
M30 = tl.constexpr(0x30303030)  # bits 4-5 of each byte


@triton.jit
def dot4(a, b, SIGNED: tl.constexpr, ASM: tl.constexpr):
    """Sum over the four bytes of a (unsigned, or signed if SIGNED) times the bytes of b (signed)."""
    if ASM:
        if SIGNED:
            return tl.inline_asm_elementwise("dp4a.s32.s32 $0, $1, $2, $3;", "=r,r,r,r",
                                             [a, b, tl.zeros_like(a)], dtype=tl.int32, is_pure=True, pack=1)
        else:
            return tl.inline_asm_elementwise("dp4a.u32.s32 $0, $1, $2, $3;", "=r,r,r,r",
                                             [a, b, tl.zeros_like(a)], dtype=tl.int32, is_pure=True, pack=1)
    else:
        if SIGNED:
            a0, a1, a2, a3 = (a << 24) >> 24, (a << 16) >> 24, (a << 8) >> 24, a >> 24
        else:
            a0, a1, a2, a3 = a & 255, (a >> 8) & 255, (a >> 16) & 255, (a >> 24) & 255
        return a0 * ((b << 24) >> 24) + a1 * ((b << 16) >> 24) + a2 * ((b << 8) >> 24) + a3 * (b >> 24)


@triton.jit
def in_range(idx, limit, EVEN: tl.constexpr):
    """The in-range mask of idx, all true (folded away) when the loop steps divide K evenly."""
    if EVEN:
        return tl.full(idx.shape, 1, tl.int1)
    else:
        return idx < limit
