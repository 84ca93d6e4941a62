"""Compile the CUDA backend's launches for an H100 / H200 (sm_90) without a GPU: every Triton launch made while this
runs is compiled for that target instead of launched (`JITFunction.warmup` under a stand-in driver), and each prints
its kernel, constexprs, registers (ptxas -v on the PTX) and shared memory. A kernel that does not compile for the GPU,
or a change that costs registers (programs an SM), shows here before a device call. The outputs are not computed.

    python bench/sm90_offline.py            the tile GEMM, split sums, batched attention, gated norm and delta rule
                                            at a 64-sequence step's shapes (session 46's changes)
Library use: `import sm90_offline; sm90_offline.compile_only()`, then call kernel wrappers on CPU tensors.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.runtime import driver
from triton.runtime.jit import JITFunction


class _Sm90:
    """The active driver's part that compiling asks for: an sm_90 target, device 0, stream 0."""

    def get_current_target(self):
        return GPUTarget("cuda", 90, 32)

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0


def registers(ptx: str) -> int:
    """ptxas -v's register count of a PTX text for sm_90a (-1 when it says none)."""
    ptxas = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas"
    path = Path(os.environ.get("TMPDIR", "/tmp")) / "sm90_offline.ptx"
    path.write_text(ptx)
    r = subprocess.run([str(ptxas), "-v", "--gpu-name", "sm_90a", str(path), "-o", os.devnull], capture_output=True,
                       text=True)
    m = re.search(r"Used (\d+) registers", r.stderr)
    return int(m.group(1)) if m else -1


def compile_only(log=print) -> list[dict]:
    """From now on every `kernel[grid](...)` compiles for sm_90 (ASM=1 where the kernel has it, as on a GPU) and logs
    a line; returns the list the rows are appended to."""
    driver.set_active(_Sm90())
    rows: list[dict] = []

    def getitem(self, grid):
        def run(*args, **kw):
            if "ASM" in self.arg_names:
                kw["ASM"] = 1
            c = self.run(*args, grid=grid, warmup=True, **kw)
            row = dict(kernel=self.fn.__name__, constexprs={k: v for k, v in kw.items() if k.isupper()},
                       registers=registers(c.asm["ptx"]), shared=c.metadata.shared, warps=c.metadata.num_warps)
            rows.append(row)
            log(f"{row['kernel']:22} regs {row['registers']:4d} smem {row['shared']:6d} warps {row['warps']} "
                f"{row['constexprs']}")
            return c
        return run
    JITFunction.__getitem__ = getitem
    return rows


def main() -> None:
    import numpy as np

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    compile_only()
    from zinc.backends.base import QTensor
    from zinc.backends.cuda.kernels import moe, seqs
    from zinc.backends.cuda.kernels import recurrent as krec
    from zinc.backends.cuda.weights import CudaWeight
    from zinc.gguf.constants import GGMLType as T
    from zinc.gguf.quants import random_blocks

    rng = np.random.default_rng(0)

    def weight(t, n, k):
        return CudaWeight(QTensor("w", t, (n, k), random_blocks(t, n * k, rng, scale=0.05)), torch.device("cpu"))
    x, ids = torch.randn(64, 1024), torch.zeros(64, 1, dtype=torch.int32)
    aligned = (torch.arange(64, dtype=torch.int32), torch.zeros(1, dtype=torch.int32))
    sems, half = torch.zeros(64, dtype=torch.int32), torch.empty(64, 256, dtype=torch.float16)
    for t in (T.Q4_K, T.Q6_K, T.Q8_0):  # the GLU's forms (CudaOps._gemm_tiles) with and without the f16 copy
        g, u = weight(t, 256, 1024), weight(t, 256, 1024)
        for h in (None, half):
            for bn, swap, splits, s in ((64, True, 2, sems), (64, True, 1, None), (32, False, 1, None)):
                moe.experts_gemm(x, g.parts, int(t), 1, 256, 1024, ids, aligned, glu=(u.parts, 0), bm=64, bn=bn,
                                 splits=splits, swap=swap, sems=s, out16=h)
        moe.experts_gemm(x, g.parts, int(t), 1, 256, 1024, ids, aligned, bm=64, bn=64, splits=4, swap=True)
    B, hq, hk, d = 64, 32, 8, 128  # batched attention at Qwen3-8B's heads, q / k / v views of one fused output
    qkv = torch.randn(B, (hq + 2 * hk) * d)
    q, k, v = (a.view(B, -1, d) for a in qkv.split([hq * d, hk * d, hk * d], 1))
    pos, table, c = torch.zeros(B, dtype=torch.int32), torch.zeros(B, 4, dtype=torch.int64), torch.ones(d // 2)
    for nsplit in (1, 4):
        seqs.attention_seqs(q, k, v, pos, table, True, c, 1.0, d, True, 0.1, q_w=torch.ones(d), k_w=torch.ones(d),
                            eps=1e-6, nsplit=nsplit, max_cells=256, out16=torch.empty(B, hq * d, dtype=torch.float16))
    krec.rms_norm_gated(torch.randn(64, 32, 128), torch.ones(128), 1e-6, torch.randn(64, 32, 128), None,
                        torch.empty(64, 4096, dtype=torch.float16))
    C = 2 * 16 * 128 + 32 * 128  # Qwen3.5-35B-A3B's DeltaNet
    for cfg in ((16, 4), (32, 4), (64, 8), (128, 8)):
        krec.DELTA_SEQS = cfg
        krec.conv_delta_seqs(torch.randn(64, C), torch.randn(64, 32), torch.randn(64, 32), torch.randn(C, 4),
                             torch.randn(32), torch.randn(32), torch.zeros(64, 4, dtype=torch.int64), (16, 32, 128),
                             1e-6)


if __name__ == "__main__":
    main()
