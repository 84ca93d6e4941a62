"""Triton kernels of the CUDA backend: quantized matvec and dequantization (`quant`), row norms,
rope and GLU (`elementwise`), decode attention (`attention`). Every kernel also runs under
``TRITON_INTERPRET=1`` on CPU tensors, which is how CI checks them against the NumPy backend.

Programmatic dependent launch (Hopper and newer): the kernels a decode step runs take `PDL` and are
launched with `**pdl(t)`. Such a kernel first lets the next kernel in the stream launch, then waits
for the previous one to finish (`pdl_wait`): the next kernel's programs are scheduled while this
one's last programs still run, instead of after a full drain. Before its wait a kernel may read only
what no kernel writes (weights: the matvecs ask the L2 for their rows there); everything else,
every store included, comes after it. A kernel launched with PDL must reach `pdl_wait` in every
program."""

import functools

import torch
import triton
import triton.language as tl

PDL = True  # launch with programmatic dependent launch where the GPU has it (False: plain launches, to compare)


@functools.lru_cache(maxsize=None)
def _has_pdl(index: int) -> bool:
    return torch.cuda.get_device_capability(index)[0] >= 9


def pdl(t: torch.Tensor) -> dict:
    """Launch options for a kernel that takes `PDL`, on the device of `t`."""
    on = bool(PDL and t.is_cuda and _has_pdl(t.device.index if t.device.index is not None else 0))
    return {"PDL": on, "launch_pdl": on} if on else {}


@triton.jit
def pdl_wait(PDL: tl.constexpr):
    """Let the next kernel launch, then wait until the previous one is done (its stores visible)."""
    if PDL:
        tl.extra.cuda.gdc_launch_dependents()
        tl.extra.cuda.gdc_wait()


@triton.jit
def prefetch_rows(p, r, ROWW, LN: tl.constexpr):
    """Ask the L2 for the 128-byte lines of rows r (BN,) of the int32 array p (ROWW words a row, LN a
    power of two >= its lines): weights, before `pdl_wait`, so the loads after it find them there."""
    o = tl.minimum(tl.arange(0, LN) * 32, ROWW - 1)
    addr = (p + r[:, None] * ROWW + o[None, :]).to(tl.int64)
    tl.inline_asm_elementwise("prefetch.global.L2 [$1]; // $0", "=r,l", [addr], dtype=tl.int32, is_pure=False,
                              pack=1)
