"""The decode split kernel compiled for sm_90 with no GPU: registers, spills and shared memory of split rows.

    PYTHONPATH=/path/to/triton-3.6 python bench/cuda_split_offline.py [--src DIR] [--no-rope] [--cluster N] BS/STAGES/STEPS ...

Compiles `kattn.attn_split_kernel` at Qwen3-8B's decode shapes (4 query rows a KV head padded to 16, head dims
128, f16 cells, one token, 4 warps; with the rope prologue and KV write unless --no-rope) with `triton.compile`
for compute capability 9.0, then runs the Triton's own ptxas -v on the PTX for the registers and spill stores.
Each row is BS/STAGES/STEPS: cells a step, pipeline stages, and STEPS the unrolled loop's trip count (0: the
run-time loop; `kattn.decode_attention` passes STEPS = cdiv(cdiv(cells, splits), BS) for stages 0). --src: a source
tree to take the kernel from (e.g. one with a bench/wip patch applied).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

PTRS = dict(q="*fp32", k="*fp16", v="*fp16", q_pos="*i32", kv_pos="*i32", m_out="*fp32", l_out="*fp32",
            o_out="*fp32", qw="*fp32", knew="*fp32", kw="*fp32", vnew="*fp32", rc="*fp32", slots="*i32",
            kd="*fp16", vd="*fp16", sinks="*fp32", out="*fp32", xq="*i32", xd="*fp32", xs="*fp32")
SCALARS = dict(T="i32", S="i32", n_kv="i32", scale="fp32", cap="fp32", window="i32", NSPLIT="i32", eps="fp32",
               mscale="fp32", HQ="i32")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("rows", nargs="+", help="BS/STAGES/STEPS")
    ap.add_argument("--src", default=str(Path(__file__).resolve().parents[1] / "src"))
    ap.add_argument("--no-rope", action="store_true")
    ap.add_argument("--cluster", type=int, default=0, help="splits merged in a cluster (CLUSTER; with QUANT)")
    a = ap.parse_args()
    sys.path.insert(0, a.src)
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from zinc.backends.cuda.kernels import attention as kattn

    fn = kattn.attn_split_kernel
    ptxas = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")
    rope = not a.no_rope
    for row in a.rows:
        bs, stages, steps = (int(x) for x in row.split("/"))
        cst = dict(R=4, D=128, DV=128, DP=128, DVP=128, HKV=8, BM=16, BS=bs, SOFTCAP=False, KV16=True, EXACT=False,
                   ROPE=rope, NDIMS=128 if rope else 0, NEOX=rope, QNORM=rope, KNORM=rope, FROM_POS=False, ONE=True,
                   Q8=False, FINAL=False, HAS_SINK=False, QUANT=False, PDL=0, TRIG=0)
        if a.cluster:
            cst.update(CLUSTER=max(2, triton.next_power_of_2(a.cluster)),
                       CDC=max(32, triton.next_power_of_2(triton.cdiv(128, a.cluster))), QUANT=True)
        if "STEPS" in fn.arg_names:
            cst["STEPS"] = steps
        elif steps:
            print(f"{row}: this tree's kernel has no unrolled loop (STEPS)")
            continue
        sig = {n: PTRS.get(n) or SCALARS.get(n) or "constexpr" for n in fn.arg_names}
        # as a launch specializes them: torch's pointers 16-byte aligned, the cell count and query heads multiples
        # of 16 (without these no load is known aligned and the loop gets no cp.async pipeline)
        div = {(i,): [["tt.divisibility", 16]] for i, n in enumerate(fn.arg_names) if n in PTRS or n in ("S", "HQ")}
        c = triton.compile(ASTSource(fn, sig, cst, div), target=GPUTarget("cuda", 90, 32),
                           options=dict(num_warps=4, num_stages=max(stages, 1)))
        with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
            f.write(c.asm["ptx"])
        r = subprocess.run([ptxas, "-v", "--gpu-name", "sm_90a", f.name, "-o", os.devnull], capture_output=True,
                           text=True)
        os.unlink(f.name)
        if a.cluster:
            print("cluster barrier in the PTX:", "barrier.cluster.arrive.release" in c.asm["ptx"], r.stderr.strip()[-300:]
                  if r.returncode else "ptxas ok")
        regs = re.search(r"Used (\d+) registers", r.stderr)
        spill = re.search(r"(\d+) bytes spill stores", r.stderr)
        print(f"Triton {triton.__version__} sm_90, rope {rope}, BS {bs}, stages {stages}, STEPS {steps}: registers "
              f"{regs.group(1) if regs else '?'}, spill stores {spill.group(1) if spill else '?'} B, shared "
              f"{c.metadata.shared} B", flush=True)


if __name__ == "__main__":
    main()
