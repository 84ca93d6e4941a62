"""The Vulkan 8-bit-activation matvecs (mvq, mvq_glu) with their activation rows staged in workgroup
memory (VulkanOps.matvec_xs) against the NumPy backend and against the same kernels reading global memory.

As in test_vulkan.py, the GPU work runs in a child process (`python test_vulkan_mvq_xs.py`, conftest's
`vulkan_child`) that prints one JSON object: case name -> metrics (or an error string); locally that is
lavapipe. Small odd shapes (rows not a multiple of a workgroup's), fresh random inputs, 1-4 activation
rows per dispatch.
"""

from __future__ import annotations

import json
import traceback

import numpy as np
import pytest

# against NumPy on NumPy's 8-bit activations: a driver whose division is not correctly rounded (NVIDIA)
# can put one code a step off at a rounding boundary (test_vulkan.py's Q8_TOL), which a few hundred
# random rows sometimes hit
TOL = 2e-3
SAME = 1e-5  # staged vs global reads: the same arithmetic (a driver may still contract it differently)
# (L lanes per row, R rows per lane, S row slots, subgroup shuffles, tokens): the defaults, a workgroup
# reduction, row slots not a power of two, lanes that fit lavapipe's subgroups; 1-4 activation rows a
# dispatch (7 tokens: two dispatches of 4 and 3, the second's rows from t0 = 4). Few pairs: each is two
# pipelines per row count, and lavapipe compiles one in about a second on a cold shader cache
SHAPES = [(32, 1, 8, True, 1), (16, 2, 16, True, 7), (32, 2, 2, False, 2), (16, 1, 3, False, 3), (4, 2, 2, True, 4)]
CASES = [f"{kernel}_{t}" for kernel in ("mvq", "mvq_glu") for t in ("Q4_K", "Q6_K")] + ["fallback_Q4_K"]
SHAPE_CFG = (16, 1, 3, True)  # a per-shape entry (VulkanOps.matvec_shapes) unlike the kernel's default


# ------------------------------------------------------------------------------------------ child side


def _q8(x: np.ndarray) -> np.ndarray:
    """x as the mvq kernels read it: blocks of 32 as int8 codes times max|x| / 127 (lib/q8.wgsl)."""
    b = np.asarray(x, np.float32).reshape(-1, 32)
    amax = np.abs(b).max(axis=1, keepdims=True)
    with np.errstate(divide="ignore"):
        inv = np.where(amax > 0, np.float32(127.0) / amax, np.float32(0.0)).astype(np.float32)
    return (np.round(b * inv) * (amax / np.float32(127.0))).astype(np.float32).reshape(np.shape(x))


def _err(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-30)) if a.shape == b.shape else float("inf")


def _qtensor(rng, t: str, shape: tuple[int, ...]):
    from zinc.backends.base import QTensor
    from zinc.gguf.constants import GGMLType
    from zinc.gguf.quants import quantize

    gt = GGMLType[t]
    return QTensor("w", gt, shape, quantize((rng.standard_normal(shape) * 0.1).astype(np.float32), gt))


def _product(vk, x: np.ndarray, w, w2):
    V = vk.from_numpy
    return vk.to_numpy(vk.matmul_glu(V(x), w, w2, "silu") if w2 is not None else vk.matmul(V(x), w))


def _case(vk, cpu, rng, name: str) -> dict:
    """Every shape of SHAPES at its token count: XS against NumPy and against XS off; fallback: K = 12288
    (18 KB a row) at 1 and 4 tokens, where 4 rows exceed any adapter's workgroup memory and the kernel
    reads global memory instead."""
    kind, t = name.rsplit("_", 2)[0], "_".join(name.rsplit("_", 2)[1:])
    glu = kind == "mvq_glu"
    K, N = (12288, 11) if kind == "fallback" else (768, 37)
    qa, qb = _qtensor(rng, t, (N, K)), _qtensor(rng, t, (N, K))
    wa, wb, ca, cb = vk.upload(qa), vk.upload(qb), cpu.upload(qa), cpu.upload(qb)
    shapes = [(*SHAPES[0][:4], 1), (*SHAPES[0][:4], 4)] if kind == "fallback" else SHAPES
    sub0, out = vk.dev.subgroups, {"vs_numpy": 0.0, "xs_vs_global": 0.0, "staged": 0, "dispatches": 0}
    try:
        for L, R, S, sg, T in shapes:
            vk.dev.subgroups = sub0 and sg
            vk.matvec = {**vk.matvec, "mvq": (L, R, S), "mvq_glu": (L, R, S)}
            x = (rng.standard_normal((T, K)) * 2.0).astype(np.float32)
            ref = cpu.matmul_glu(_q8(x), ca, cb, "silu") if glu else cpu.matmul(_q8(x), ca)
            got = {}
            for xs in (False, True):
                vk.matvec_xs = {"mvq": xs, "mvq_glu": xs}
                got[xs] = _product(vk, x, wa, wb if glu else None)
            out["vs_numpy"] = max(out["vs_numpy"], _err(got[True], ref))
            out["xs_vs_global"] = max(out["xs_vs_global"], _err(got[True], got[False]))
            for t0 in range(0, T, 4):  # dispatches, and those that staged their rows
                out["dispatches"] += 1
                out["staged"] += vk._mvq_xs("mvq_glu" if glu else "mvq", (L, R, S, True), K, min(4, T - t0))
    finally:
        vk.dev.subgroups = sub0
        vk.matvec_xs = dict(__import__("zinc.backends.vulkan.ops", fromlist=["x"]).MATVEC_XS)
        vk.matvec = dict(__import__("zinc.backends.vulkan.ops", fromlist=["x"]).MATVEC_CONFIG)
    # the pipelines built: some with the staging copy (with the rows in workgroup memory), some without
    srcs = [dict(key[2]).get("XSRC", "") for key in vk.dev._pipelines if key[0] == kind.replace("fallback", "mvq")
            and dict(key[2]).get("K") == str(K) and dict(key[2])["UNIT"].startswith(f"// {t} ")]
    out["pipelines_staged"] = sum("var<workgroup> xsh" in s for s in srcs)
    out["pipelines_global"] = sum(s.startswith("fn xq") for s in srcs)
    out["limit"] = int(vk.dev.device.limits.get("max-compute-workgroup-storage-size", 16384))
    return out


def _shape_table(vk, cpu, rng) -> dict:
    """An mvq dispatch whose (kernel, type, N, K) has an entry in `matvec_shapes` runs that config (its
    pipeline is built with those L, S and the staging copy) and still matches NumPy; other shapes keep
    the kernel's."""
    from zinc.backends.vulkan.ops import MATVEC_CONFIG

    N, K = 37, 768
    q = _qtensor(rng, "Q4_K", (N, K))
    w, c = vk.upload(q), cpu.upload(q)
    x = (rng.standard_normal((2, K)) * 2.0).astype(np.float32)
    vk.matvec_shapes[("mvq", "Q4_K", N, K)] = SHAPE_CFG
    try:
        err = _err(_product(vk, x, w, None), cpu.matmul(_q8(x), c))
        other = _qtensor(rng, "Q4_K", (N + 8, K))
        err_other = _err(_product(vk, x, vk.upload(other), None), cpu.matmul(_q8(x), cpu.upload(other)))
    finally:
        del vk.matvec_shapes[("mvq", "Q4_K", N, K)]
    built = [dict(key[2]) for key in vk.dev._pipelines if key[0] == "mvq" and dict(key[2]).get("K") == str(K)]
    return {"err": err, "err_other": err_other,
            "with_cfg": sum(b["L"] == "16" and b["S"] == "3" and "xsh" in b["XSRC"] for b in built),
            "default": sum((int(b["L"]), int(b["R"]), int(b["S"])) == MATVEC_CONFIG["mvq"] for b in built)}


def _child() -> dict:
    from zinc.backends import get_backend
    from zinc.backends.cpu import CpuOps
    from zinc.errors import BackendUnavailableError

    try:
        vk = get_backend("vulkan", allow_cpu_adapter=True)
    except BackendUnavailableError as e:
        return {"unavailable": str(e)}
    results: dict = {"adapter": vk.stats["adapter"]}
    cpu, rng = CpuOps(), np.random.default_rng()
    for name in CASES:
        try:
            results[name] = _case(vk, cpu, rng, name)
        except Exception:  # noqa: BLE001 - reported to the parent, which fails that case
            results[name] = traceback.format_exc()
    try:
        results["shape_table"] = _shape_table(vk, cpu, rng)
    except Exception:  # noqa: BLE001
        results["shape_table"] = traceback.format_exc()
    return results


# ------------------------------------------------------------------------------------------ parent side


@pytest.fixture(scope="module")
def results(vulkan_child) -> dict:
    return vulkan_child(__file__)


@pytest.mark.parametrize("case", CASES)
def test_staged_activations_match(results, case):
    r = results[case]
    assert not isinstance(r, str), r
    assert r["vs_numpy"] <= TOL, r
    assert r["xs_vs_global"] <= SAME, r
    if case.startswith("fallback"):  # 1 row of 18 KB staged where it fits, 4 rows (72 KB) read from global memory
        assert r["staged"] == int(r["limit"] >= 20 << 10) and r["pipelines_global"] >= 1, r
    else:  # every dispatch fits (4 rows of 768 are 4.5 KB), and so staged: one pipeline per shape and row count
        assert r["staged"] == r["dispatches"] == len(SHAPES) + 1, r
        assert r["pipelines_staged"] == r["pipelines_global"] == len(SHAPES) + 1, r


def test_per_shape_config(results):
    r = results["shape_table"]
    assert not isinstance(r, str), r
    assert r["err"] <= TOL and r["err_other"] <= TOL, r
    assert r["with_cfg"] >= 1 and r["default"] >= 1, r


if __name__ == "__main__":
    print(json.dumps(_child()), flush=True)
