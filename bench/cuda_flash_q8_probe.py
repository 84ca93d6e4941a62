"""The prefill flash kernel on q8_0 cells at several (D, DV) widths against the NumPy backend (GPU):
`python bench/cuda_flash_q8_probe.py` prints the relative errors so far after each width. On the H200 with
Triton 3.6 the kernel gave wrong values at 64 x 32 and read out of bounds at 128 x 32 (every family's width was
right), so `flash.prefill_attention` now gives widths of DV = 32 < D f16 copies of the cells.
"""

import numpy as np
from zinc.backends.cpu import CpuOps
from zinc.backends.cuda.ops import CudaOps
from zinc.backends.base import Q8Cells
from zinc.testing.compare import rel_err as rel
ref, ops = CpuOps(), CudaOps(device="cuda", graphs=False)
out = []
WIDTHS = [(64, 32, 6, 2, 20), (32, 32, 4, 2, 20), (128, 128, 8, 2, 20), (256, 256, 4, 2, 20), (128, 64, 4, 2, 20),
          (64, 128, 4, 2, 20), (512, 512, 8, 1, 20), (96, 96, 4, 2, 20), (256, 128, 4, 2, 40), (128, 32, 4, 1, 20)]
for D, DV, Hq, Hkv, T in WIDTHS:
    rng = np.random.default_rng(D + DV + Hq + Hkv)
    S, n = 53, 41
    ck, cv = ref.kv_cells((S, Hkv, D), "q8_0"), ref.kv_cells((S, Hkv, DV), "q8_0")
    cp = np.full(S, -1, np.int32)
    ref.kv_write(ck, cv, cp, rng.standard_normal((n, Hkv, D)).astype(np.float32),
                 rng.standard_normal((n, Hkv, DV)).astype(np.float32), np.arange(n, dtype=np.int32), np.arange(n))
    q = rng.standard_normal((T, Hq, D)).astype(np.float32)
    qp = np.arange(n - T, n, dtype=np.int32)
    want = ref.attention(q, ck, cv, qp, cp, n, 0.2)
    C = ops.from_numpy
    got = ops.attention(C(q), Q8Cells(C(ck.q), C(ck.d)), Q8Cells(C(cv.q), C(cv.d)), C(qp), C(cp), n, 0.2)
    out.append(f"{D}x{DV}:{rel(ops.to_numpy(got), want):.0e}")
    print(" ".join(out), flush=True)
