"""The Vulkan (wgpu/WGSL) backend against the NumPy backend, on whatever adapter wgpu finds.

Locally and in CI that is Mesa's software driver lavapipe (`allow_cpu_adapter=True`). Every GPU
case runs in a child process (`python test_vulkan.py <group>`, conftest's `vulkan_child`), so a driver
abort cannot take the test run down; the child prints one JSON object: case name -> normalized error
(or a dict of metrics, or an error string). Cases compare on small odd shapes with fresh random
inputs. Recorded steps (replay, the device greedy loop): test_vulkan_steps.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import traceback
import zlib
from pathlib import Path

import numpy as np
import pytest

from zinc.testing.compare import compare_logits

TOL = 2e-5  # normalized max error max|a - b| / max|b| for f32 math in a different order
# cases where a kernel quantizes its own output to 8 bits and NumPy quantizes the same values: a GPU
# driver's division is not correctly rounded (NVIDIA), so a code can land one step off at a rounding
# boundary (one element off by <= 1/127 of its block's max: 4.6e-4 measured on the H200)
Q8_TOL = {"q8_chain": 2e-3, "attention_q8": 2e-3, "attention_split_q8": 2e-3}
WEIGHT_TYPES = ["F32", "F16", "BF16", "Q8_0", "Q4_0", "Q5_0", "Q4_K", "Q5_K", "Q6_K", "MXFP4"]
KERNEL_CASES = [f"{op}_{t}" for op in ("matmul", "embed") for t in WEIGHT_TYPES] + [
                "matmul_experts_Q4_K", "matmul_experts_MXFP4", "matmul_experts_Q5_0", "router_topk_softmax",
                "router_topk_sigmoid", "router_topk_softmax_weight", "weighted_sum", "add_rms_norm",
                "matmul_glu_silu", "matmul_glu_swiglu_oai", "matmul_glu_gelu", "rope_kv_write",
                "norm_rope", "norm_rope_kv_write", "matmul_bias", "matmul_experts_bias",
                "conv1d_causal", "delta_net_recurrent", "delta_net_chunked",
                "rms_norm", "rms_norm_no_w", "rope_neox", "rope_norm", "attention_gqa", "attention_window",
                "attention_softcap_sinks", "glu_silu", "glu_gelu", "glu_swiglu_oai", "unary", "add_mul",
                "scale_softcap", "argmax", "split_slice", "kv_write", "fill", "split_weight",
                "matvec_Q4_K", "matvec_Q6_K", "matvec_glu_Q4_K", "matvec_glu_Q6_K", "matvec_bias_Q6_K",
                "mvq_Q4_K", "mvq_Q6_K", "mvq_glu_Q4_K", "mvq_glu_Q6_K", "mvq_bias_Q4_K", "rms_norm4", "q8_chain",
                "attention_q8", "q8_split", "attention_rope_kv", "q8_pair", "attention_split", "attention_split_q8"]
# decode matvec shapes tried: (lanes per row, rows per lane, row slots per workgroup, subgroup shuffles)
MATVEC_SHAPES = [(32, 2, 2, True), (32, 2, 2, False), (4, 3, 2, True), (16, 1, 4, False), (8, 4, 1, True)]
# the same for the 8-bit-activation kernels (mvq_glu writes 8-bit outputs when R * S % 32 == 0)
MVQ_SHAPES = [(32, 1, 8, True), (16, 2, 16, True), (32, 2, 2, False), (8, 4, 8, True), (16, 1, 3, False),
              (4, 2, 2, True)]
MODEL_CASES = ["qwen3-tiny:Q4_K_M", "qwen3-tiny:Q8_0", "llama3-tiny:Q4_K_M", "llama3-tiny:Q8_0",
               "qwen3moe-tiny:Q4_K_M", "gpt-oss-tiny:Q4_K_M", "gpt-oss-tiny:MXFP4_MOE",
               "qwen35-tiny:Q4_K_M", "qwen35moe-tiny:Q4_K_M"]


# ------------------------------------------------------------------------------------------ child side


def _rand(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _err(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        return float("inf")
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-30))


def _qtensor(rng, t: str, shape: tuple[int, ...]):
    from zinc.backends.base import QTensor
    from zinc.gguf.constants import GGMLType
    from zinc.gguf.quants import quantize

    gt = GGMLType[t]
    return QTensor("w", gt, shape, quantize(_rand(rng, *shape, scale=0.1), gt))


def _q8(x: np.ndarray) -> np.ndarray:
    """x as the decode matvecs see it: rows in blocks of 32 quantized to int8 codes times d = max|x| / 127
    (lib/q8.wgsl, computed the same way in float32)."""
    b = np.asarray(x, np.float32).reshape(-1, 32)
    amax = np.abs(b).max(axis=1, keepdims=True)
    with np.errstate(divide="ignore"):
        inv = np.where(amax > 0, np.float32(127.0) / amax, np.float32(0.0)).astype(np.float32)
    codes = np.round(b * inv)
    return (codes * (amax / np.float32(127.0))).astype(np.float32).reshape(np.shape(x))


def _x_seen(vk, t: str, x: np.ndarray) -> np.ndarray:
    """The activations a matmul of type `t` reads: 8-bit for the Q4_K / Q6_K matvecs, else x itself."""
    return _q8(x) if vk.matvec_q8 and t in ("Q4_K", "Q6_K") else x


def _k_for(t: str) -> int:
    """An odd row length the type allows: not a multiple of 2 for float types, 3 blocks for 32-blocks."""
    return {"F32": 37, "F16": 37, "BF16": 37}.get(t, 96 if t in ("Q8_0", "Q4_0", "Q5_0", "MXFP4") else 512)


def _weight_case(vk, cpu, rng, name: str) -> float:
    kind, t = name.split("_", 1)
    K, N = _k_for(t), 13
    qt = _qtensor(rng, t, (N, K))
    wv, wc = vk.upload(qt), cpu.upload(qt)
    if kind == "embed":
        ids = np.array([5, 0, 12, 5, 7], np.int32)
        return _err(vk.to_numpy(vk.embed(wv, vk.from_numpy(ids))), cpu.embed(wc, ids))
    errs = []
    for T in (1, 5, 9):
        x = _rand(rng, T, K)
        errs.append(_err(vk.to_numpy(vk.matmul(vk.from_numpy(x), wv)), cpu.matmul(_x_seen(vk, t, x), wc)))
    return max(errs)


def _attention_case(vk, cpu, rng, name: str) -> float:
    """A cache of 70 cells (68 in use); for attention_gqa also one of 300 (290 in use: several rounds of
    the kernel's key tiles), a decode step of Qwen3-8B's heads at a short cache, odd head dims and
    heads of 256."""
    shapes = [(70, 68, 3, 6, 2, 40, 48)]  # cells, in use, tokens, q heads, kv heads, Dh, Dv
    if name == "attention_gqa":
        shapes += [(300, 290, 3, 6, 2, 40, 48), (21, 20, 1, 32, 8, 128, 128), (50, 37, 2, 3, 1, 37, 19),
                   (9, 9, 1, 4, 4, 256, 256)]
    return max(_attention_at(vk, cpu, rng, name, *sh) for sh in shapes)


def _attention_at(vk, cpu, rng, name: str, S: int, n_kv: int, T: int, Hq: int, Hkv: int, Dh: int, Dv: int) -> float:
    q, k, v = _rand(rng, T, Hq, Dh), _rand(rng, S, Hkv, Dh), _rand(rng, S, Hkv, Dv)
    kv_pos = np.arange(S, dtype=np.int32)
    kv_pos[[i for i in (3, 40) if i < S]] = -1
    q_pos = np.array([n_kv - 8, n_kv - 2, n_kv - 1][3 - T:], np.int32)
    kw = {"window": 0, "softcap": 0.0, "sinks": None}
    if name == "attention_window":
        kw["window"] = 9
    if name == "attention_softcap_sinks":
        kw.update(softcap=5.0, sinks=_rand(rng, Hq))
    ref = cpu.attention(q, k, v, q_pos, kv_pos, n_kv, 0.15, **kw)
    vkw = dict(kw, sinks=vk.from_numpy(kw["sinks"]) if kw["sinks"] is not None else None)
    got = vk.attention(*(vk.from_numpy(a) for a in (q, k, v, q_pos, kv_pos)), n_kv, 0.15, **vkw)
    return _err(vk.to_numpy(got), ref)


def _attention_rope_case(vk, cpu, rng) -> float:
    """One token's Q and K norms + rope + KV write (rope_qk_kv_write) and the attention over that cache:
    one dispatch (the attention does the rest), the cache written as the NumPy backend writes it, at
    several head shapes (odd dims, a rope over part of the head, no norms, a cell rewritten in place);
    and the rotated Q read directly (the deferred op runs on its own)."""
    from zinc.backends.base import RopeParams

    V, C = vk.from_numpy, vk.to_numpy
    errs = []
    for S, n_kv, slot, Hq, Hkv, Dh, Dv, n_dims, mode, norms in (
            (30, 26, 25, 6, 2, 40, 48, 24, "neox", True), (21, 20, 19, 32, 8, 128, 128, 128, "neox", True),
            (16, 16, 3, 3, 1, 37, 19, 36, "norm", False), (9, 9, 8, 4, 4, 256, 256, 256, "norm", True)):
        p = RopeParams(n_dims=n_dims, mode=mode, freq_base=10000.0)
        q, k, v = _rand(rng, 1, Hq, Dh, scale=2.0), _rand(rng, 1, Hkv, Dh, scale=2.0), _rand(rng, 1, Hkv, Dv)
        qn, kn = (_rand(rng, Dh), _rand(rng, Dh)) if norms else (None, None)
        ck, cv = _rand(rng, S, Hkv, Dh), _rand(rng, S, Hkv, Dv)
        cp = np.arange(S, dtype=np.int32)
        cp[5] = -1
        pos, slots = np.array([n_kv - 1 if slot == n_kv - 1 else S], np.int32), np.array([slot], np.int32)
        cp[slot] = 1000  # a stale position the write replaces
        vn = [V(a) if a is not None else None for a in (qn, kn)]
        for direct in (False, True):
            cache = [a.copy() for a in (ck, cv, cp)]
            rq = cpu.rope(cpu.rms_norm(q, qn, 1e-6) if norms else q, pos, p)
            cpu.rope_kv_write(cpu.rms_norm(k, kn, 1e-6) if norms else k, v, pos, p, None, *cache, slots)
            ref = cpu.attention(rq, cache[0], cache[1], pos, cache[2], n_kv, 0.125)
            vcache = [V(a) for a in (ck, cv, cp)]
            for a in vcache:
                a.host = None  # read the device's copy back
            vpos = V(pos)
            d0 = vk.stats["dispatches"]
            vq = vk.rope_qk_kv_write(V(q), V(k), V(v), vpos, p, None, *vcache, V(slots), q_norm=vn[0], k_norm=vn[1],
                                     eps=1e-6)
            if direct:
                errs.append(_err(C(vq), rq))
            got = C(vk.attention(vq, vcache[0], vcache[1], vpos, vcache[2], n_kv, 0.125))
            n = vk.stats["dispatches"] - d0
            errs += [_err(got, ref), _err(C(vcache[0]), cache[0]), _err(C(vcache[1]), cache[1]),
                     float(np.any(C(vcache[2]) != cache[2])), float(not direct and n != 1)]
    return max(errs)


def _attention_split_case(vk, cpu, rng, name: str) -> float:
    """One-token attention split over the cache (vulkan/attention.py: 1 dispatch, 2 with splits) against NumPy
    at (cells, in use, Hq, Hkv, Dh, Dv, window, softcap, sinks, fused rope_qk_kv_write); _q8: its 8-bit rows."""
    from zinc.backends.base import RopeParams
    from zinc.backends.vulkan.attention import n_split

    V, C, errs = vk.from_numpy, vk.to_numpy, []
    for S, n_kv, Hq, Hkv, Dh, Dv, window, cap, has_sinks, fuse in [
            (600, 599, 32, 8, 128, 128, 0, 0.0, True, False), (1000, 1000, 5, 1, 37, 19, 9, 5.0, True, False),
            (700, 2, 16, 2, 64, 64, 0, 0.0, False, False), (513, 1, 3, 3, 16, 16, 0, 0.0, True, False),
            (300, 290, 6, 3, 40, 48, 0, 0.0, False, True), (520, 333, 32, 4, 64, 64, 50, 0.0, True, True),
            (257, 257, 4, 1, 256, 256, 0, 30.0, False, True), (4000, 3001, 14, 2, 64, 32, 0, 0.0, True, True),
            (40, 37, 8, 4, 64, 64, 0, 0.0, True, True)]:
        if name.endswith("q8") and (Dv % 32 or (Hq * Dv) % 256):
            continue
        p = RopeParams(n_dims=Dh - Dh % 2, mode="neox", freq_base=10000.0)
        q, ck, cv = _rand(rng, 1, Hq, Dh), _rand(rng, S, Hkv, Dh), _rand(rng, S, Hkv, Dv)
        k, v, qn, kn = _rand(rng, 1, Hkv, Dh), _rand(rng, 1, Hkv, Dv), _rand(rng, Dh), _rand(rng, Dh)
        cp = np.where(np.isin(np.arange(S), [3, 20, S - 1]), -1, np.arange(S)).astype(np.int32)
        pos = np.array([n_kv - 1], np.int32)  # also the new cell
        kw = dict(window=window, softcap=cap, sinks=_rand(rng, Hq) if has_sinks else None)
        cache, rq = [ck.copy(), cv.copy(), cp.copy()], q
        if fuse:
            rq = cpu.rope(cpu.rms_norm(q, qn, 1e-6), pos, p)
            cpu.rope_kv_write(cpu.rms_norm(k, kn, 1e-6), v, pos, p, None, *cache, pos)
        ref = cpu.attention(rq, *cache[:2], pos, cache[2], n_kv, 0.125, **kw)
        vc, vpos, vkw = [V(a) for a in (ck, cv, cp)], V(pos), dict(kw, sinks=V(kw["sinks"]) if has_sinks else None)
        for a in vc:
            a.host = None
        vq = vk.rope_qk_kv_write(V(q), V(k), V(v), vpos, p, None, *vc, V(pos), q_norm=V(qn), k_norm=V(kn),
                                 eps=1e-6) if fuse else V(q)
        d0 = vk.stats["dispatches"]
        got = C(o := vk.attention(vq, *vc[:2], vpos, vc[2], n_kv, 0.125, **vkw))
        errs += [_err(got, ref), float(vk.stats["dispatches"] - d0 != 1 + (n_split(S) > 1)),
                 *(_err(C(a), b) for a, b in zip(vc[:2], cache[:2])), float(np.any(C(vc[2]) != cache[2]))]
        if name.endswith("q8"):
            qt, d0 = _qtensor(rng, "Q6_K", (19, Hq * Dv)), vk.stats["dispatches"]
            y = C(vk.matmul(vk.reshape(o, (1, Hq * Dv)), vk.upload(qt)))
            errs += [_err(y, cpu.matmul(_q8(got.reshape(1, -1)), cpu.upload(qt))), vk.stats["dispatches"] - d0 != 1]
    return float(max(errs))


def _rope_case(vk, cpu, rng, name: str) -> float:
    from zinc.backends.base import RopeParams

    x, pos = _rand(rng, 5, 3, 24), np.array([0, 1, 7, 300, 4001], np.int32)
    mode = name.split("_")[1]
    errs = []
    for p, ff in ((RopeParams(n_dims=24, mode=mode, freq_base=10000.0), None),
                  (RopeParams(n_dims=16, mode=mode, freq_base=500000.0), rng.uniform(1, 4, 8).astype(np.float32))):
        got = vk.rope(vk.from_numpy(x), vk.from_numpy(pos), p, vk.from_numpy(ff) if ff is not None else None)
        errs.append(_err(vk.to_numpy(got), cpu.rope(x, pos, p, ff)))
    return max(errs)


def _elementwise_case(vk, cpu, rng, name: str) -> float:
    V, C = vk.from_numpy, vk.to_numpy
    x = _rand(rng, 7, 3, 33, scale=3.0)
    if name.startswith("rms_norm"):
        w = _rand(rng, 33) if name == "rms_norm" else None
        return _err(C(vk.rms_norm(V(x), V(w) if w is not None else None, 1e-6)), cpu.rms_norm(x, w, 1e-6))
    if name.startswith("glu_"):
        act, u = name[4:], _rand(rng, 7, 3, 33, scale=3.0)
        return _err(C(vk.glu(V(x), V(u), act)), cpu.glu(x, u, act))
    if name == "unary":
        return max(_err(C(vk.unary(V(x), f)), cpu.unary(x, f)) for f in ("sigmoid", "silu", "softplus", "gelu"))
    if name == "scale_softcap":
        return max(_err(C(vk.scale(V(x), 0.37)), cpu.scale(x, 0.37)),
                   _err(C(vk.softcap(V(x), 2.5)), cpu.softcap(x, 2.5)))
    if name == "add_mul":
        pairs = [(x, _rand(rng, 33)), (x, _rand(rng, 7, 3, 1)), (x, _rand(rng, 7, 3, 33)),
                 (_rand(rng, 5, 1), _rand(rng, 5, 9))]
        return max(max(_err(C(vk.add(V(a), V(b))), cpu.add(a, b)), _err(C(vk.mul(V(a), V(b))), cpu.mul(a, b)))
                   for a, b in pairs)
    if name == "argmax":
        y = _rand(rng, 4, 1001)
        y[2, 17] = y[2, 900] = 50.0  # a tie: the first index wins
        return float(np.any(C(vk.argmax(V(y))) != cpu.argmax(y)))
    raise KeyError(name)


def _memory_case(vk, cpu, rng, name: str) -> float:
    V, C = vk.from_numpy, vk.to_numpy
    if name == "fill":  # in place (the same buffer: recorded steps keep binding it), on the device for zeros
        a, big = V(_rand(rng, 3, 7)), V(_rand(rng, 300, 301))  # big: no host copy kept
        bufs = (a._buf, big._buf)
        vk.fill(a, 0.0, "f32"), vk.fill(big, 0.0, "f32")
        p = vk.fill(vk.from_numpy(np.arange(5, dtype=np.int32)), -1, "i32")
        same = a._buf is bufs[0] and big._buf is bufs[1]
        return float(not same or C(a).any() or C(big).any() or not (C(p) == -1).all())
    if name == "split_slice":
        x = _rand(rng, 5, 31)
        parts = vk.split(V(x), (7, 13, 11))
        errs = [_err(C(p), r) for p, r in zip(parts, cpu.split(x, (7, 13, 11)))]
        return max(errs + [_err(C(vk.slice_rows(V(x), 2, 4)), x[2:4])])
    S, H, D, T = 11, 2, 6, 3
    ck, cv, cp = _rand(rng, S, H, D), _rand(rng, S, H, D + 2), np.full(S, -1, np.int32)
    k, v = _rand(rng, T, H, D), _rand(rng, T, H, D + 2)
    pos, slots = np.array([4, 5, 6], np.int32), np.array([9, 10, 0], np.int32)
    vck, vcv, vcp = V(ck), V(cv), vk.full((S,), -1, "i32")
    vk.kv_write(vck, vcv, vcp, V(k), V(v), V(pos), V(slots))
    cpu.kv_write(ck, cv, cp, k, v, pos, slots)
    return max(_err(C(vck), ck), _err(C(vcv), cv), float(np.any(C(vcp) != cp)))


def _split_weight_case(vk, cpu, rng) -> float:
    """A weight over the adapter's binding limit (here a device with a small one) is uploaded in parts of
    rows: embed and matmul (8-bit matvec, f32 matvec, prompt kernel) give what one buffer gives; and a
    tiny model whose embedding table is split gives the same logits."""
    from zinc.backends import get_backend

    errs = []
    for t in ("Q4_K", "F32"):
        q = _qtensor(rng, t, (301, 512))
        small = get_backend("vulkan", allow_cpu_adapter=True, binding_limit=max(16384, q.nbytes // 3))
        w, ref = small.upload(q), vk.upload(q)
        assert w.buf is None and len(w.parts) >= 3, (t, w.parts)
        ids = np.array([[0, 300, 113, 200, 5]], np.int32)
        errs.append(_err(small.to_numpy(small.embed(w, small.from_numpy(ids))), cpu.embed(cpu.upload(q), ids)))
        for T in (1, 3, 6):
            x = _rand(rng, T, 512)
            errs.append(_err(small.to_numpy(small.matmul(small.from_numpy(x), w)),
                             vk.to_numpy(vk.matmul(vk.from_numpy(x), ref))))
    import zinc
    from zinc.synth import write_model

    with tempfile.TemporaryDirectory() as tmp:  # the stacked projections, the FFN and the table split
        path = Path(tmp) / "split.gguf"
        write_model(path, "qwen3-tiny", ftype="Q4_K_M", seed=9)
        ids, logits = [5, 9, 77, 300, 12, 8, 41], []
        for ops in (vk, get_backend("vulkan", allow_cpu_adapter=True, binding_limit=40960)):
            m = zinc.load(path, backend=ops, n_ctx=64)
            cache = m.new_cache()
            logits.append(np.concatenate([m.forward(ids[:4], cache)] + [m.forward([i], cache) for i in ids[4:]]))
        assert sum(bool(getattr(w, "parts", None)) for w in m.weights.tensors.values()) >= 5
    return max(errs + [_err(logits[1], logits[0])])


def _bias_case(vk, cpu, rng, name: str) -> float:
    """matmul + bias row, matmul_experts + the selected experts' bias rows: one dispatch each, and the
    product without the bias still readable afterwards."""
    V, C = vk.from_numpy, vk.to_numpy
    T, K, N = 5, 96, 13
    x = _rand(rng, T, K)
    if name == "matmul_bias":
        qt, b = _qtensor(rng, "Q5_0", (N, K)), _rand(rng, N)
        wv, wc = vk.upload(qt), cpu.upload(qt)
        d0 = vk.stats["dispatches"]
        y = vk.matmul(V(x), wv)
        got = C(vk.add(y, V(b)))
        n = vk.stats["dispatches"] - d0
        return max(_err(got, cpu.add(cpu.matmul(x, wc), b)), float(n != 1), _err(C(y), cpu.matmul(x, wc)))
    E, k = 6, 2
    qt, qb = _qtensor(rng, "MXFP4", (E, N, K)), _qtensor(rng, "F32", (E, N))
    wv, wc, bv, bc = vk.upload(qt), cpu.upload(qt), vk.upload(qb), cpu.upload(qb)
    ids = np.stack([rng.permutation(E)[:k] for _ in range(T)]).astype(np.int32)
    vids = V(ids)
    d0 = vk.stats["dispatches"]
    y = vk.matmul_experts(V(x), wv, vids)
    got = C(vk.add(y, vk.embed(bv, vids)))
    n = vk.stats["dispatches"] - d0
    ref = cpu.matmul_experts(x, wc, ids)
    return max(_err(got, cpu.add(ref, cpu.embed(bc, ids))), float(n != 1), _err(C(y), ref))


def _moe_case(vk, cpu, rng, name: str) -> float:
    V, C = vk.from_numpy, vk.to_numpy
    if name.startswith("router_topk_"):
        gating = name[len("router_topk_"):]
        logits = _rand(rng, 5, 19, scale=2.0)
        logits[1, 4] = logits[1, 11] = 9.0  # a tie: the lower index first
        errs = []
        for k, norm_w, scale in ((4, True, 2.5), (3, False, 0.0)):
            ids, w = vk.router_topk(V(logits), k, gating, norm_w, scale)
            ri, rw = cpu.router_topk(logits, k, gating, norm_w, scale)
            errs += [float(np.any(C(ids) != ri)), _err(C(w), rw)]
        return max(errs)
    if name == "weighted_sum":
        x, w = _rand(rng, 3, 5, 41), _rand(rng, 3, 5)
        return _err(C(vk.weighted_sum(V(x), V(w))), cpu.weighted_sum(x, w))
    t = name[len("matmul_experts_"):]
    E, N, K, T, k = 7, 11, _k_for(t), 5, 3
    qt = _qtensor(rng, t, (E, N, K))
    wv, wc = vk.upload(qt), cpu.upload(qt)
    ids = np.stack([rng.permutation(E)[:k] for _ in range(T)]).astype(np.int32)
    errs = []
    for x in (_rand(rng, T, K), _rand(rng, T, k, K)):
        errs.append(_err(C(vk.matmul_experts(V(x), wv, V(ids))), cpu.matmul_experts(x, wc, ids)))
    return max(errs)


def _fused_case(vk, cpu, rng, name: str) -> float:
    from zinc.backends.base import RopeParams

    V, C = vk.from_numpy, vk.to_numpy
    if name == "add_rms_norm":
        x, r, w = _rand(rng, 5, 67), _rand(rng, 5, 67), _rand(rng, 67)
        (s, y), (rs, ry) = vk.add_rms_norm(V(x), V(r), V(w), 1e-5), cpu.add_rms_norm(x, r, w, 1e-5)
        return max(_err(C(s), rs), _err(C(y), ry))
    if name.startswith("matmul_glu_"):
        act, K, N = name[len("matmul_glu_"):], 512, 21
        wg, wu = _qtensor(rng, "Q4_K", (N, K)), _qtensor(rng, "Q6_K", (N, K))
        errs = []
        for T in (1, 6):
            x = _rand(rng, T, K, scale=3.0)
            got = vk.matmul_glu(V(x), vk.upload(wg), vk.upload(wu), act)
            errs.append(_err(C(got), cpu.matmul_glu(x, cpu.upload(wg), cpu.upload(wu), act)))
        return max(errs)
    S, H, D, T = 11, 2, 24, 3
    ck, cv, cp = _rand(rng, S, H, D), _rand(rng, S, H, D + 2), np.full(S, -1, np.int32)
    k, v = _rand(rng, T, H, D), _rand(rng, T, H, D + 2)
    pos, slots = np.array([4, 5, 6], np.int32), np.array([9, 10, 0], np.int32)
    p = RopeParams(n_dims=16, mode="neox", freq_base=10000.0)
    vck, vcv, vcp = V(ck), V(cv), vk.full((S,), -1, "i32")
    yk = vk.rope_kv_write(V(k), V(v), V(pos), p, None, vck, vcv, vcp, V(slots))
    rk = cpu.rope_kv_write(k, v, pos, p, None, ck, cv, cp, slots)
    return max(_err(C(yk), rk), _err(C(vck), ck), _err(C(vcv), cv), float(np.any(C(vcp) != cp)))


def _recurrent_case(vk, cpu, rng, name: str) -> float:
    V, C = vk.from_numpy, vk.to_numpy
    if name == "conv1d_causal":
        errs = []
        for T in (1, 2, 6):  # fewer and more tokens than the window
            x, st, w = _rand(rng, T, 70), _rand(rng, 3, 70), _rand(rng, 70, 4)
            vst = V(st)
            y = vk.conv1d_causal(V(x), vst, V(w))
            errs += [_err(C(y), cpu.conv1d_causal(x, st, w)), _err(C(vst), st)]
        return max(errs)
    T, Hk, Hv, S = (1 if name == "delta_net_recurrent" else 7), 2, 4, 40
    q, k, v = _rand(rng, T, Hk, S, scale=0.3), _rand(rng, T, Hk, S, scale=0.3), _rand(rng, T, Hv, S)
    g, beta = -rng.uniform(0.01, 1.0, (T, Hv)).astype(np.float32), rng.uniform(0, 1, (T, Hv)).astype(np.float32)
    st = _rand(rng, Hv, S, S, scale=0.2)
    vst = V(st)
    o = getattr(vk, name)(V(q), V(k), V(v), V(g), V(beta), vst)
    ref = getattr(cpu, name)(q, k, v, g, beta, st)
    return max(_err(C(o), ref), _err(C(vst), st))


def _norm_rope_case(vk, cpu, rng, name: str) -> float:
    """A per-head rms_norm followed by rope (+ KV write): fused into one dispatch, and the normed
    value itself still readable afterwards (its deferred dispatch runs on demand); a Q norm + rope
    recorded before the K norm + rope + KV write joins its dispatch."""
    from zinc.backends.base import RopeParams

    V, C = vk.from_numpy, vk.to_numpy
    S, H, D, T = 11, 3, 40, 3
    x, nw = _rand(rng, T, H, D, scale=2.0), _rand(rng, D)
    pos, slots = np.array([4, 5, 6], np.int32), np.array([9, 10, 0], np.int32)
    errs = []
    for p, w in ((RopeParams(n_dims=24, mode="neox", freq_base=10000.0), nw), (RopeParams(n_dims=40), None)):
        xn = cpu.rms_norm(x, w, 1e-6)
        vn = vk.rms_norm(V(x), V(w) if w is not None else None, 1e-6)
        if name == "norm_rope":
            d0 = vk.stats["dispatches"]
            got = C(vk.rope(vn, V(pos), p))
            errs += [_err(got, cpu.rope(xn, pos, p)), float(vk.stats["dispatches"] - d0 != 1)]
        else:
            ck, cv, cp = _rand(rng, S, H, D), _rand(rng, S, H, D + 2), np.full(S, -1, np.int32)
            v = _rand(rng, T, H, D + 2)
            vck, vcv, vcp = V(ck), V(cv), vk.full((S,), -1, "i32")
            xq, vpos = _rand(rng, T, H + 2, D, scale=2.0), V(pos)  # the layer's Q: rides in K's dispatch
            d0 = vk.stats["dispatches"]
            vq = vk.rope(vk.rms_norm(V(xq), V(w) if w is not None else None, 1e-6), vpos, p)
            got = C(vk.rope_kv_write(vn, V(v), vpos, p, None, vck, vcv, vcp, V(slots)))
            n = vk.stats["dispatches"] - d0
            ref = cpu.rope_kv_write(xn, v, pos, p, None, ck, cv, cp, slots)
            errs += [_err(got, ref), _err(C(vck), ck), _err(C(vcv), cv), float(np.any(C(vcp) != cp)),
                     _err(C(vq), cpu.rope(cpu.rms_norm(xq, w, 1e-6), pos, p)), float(n != 1)]
        errs.append(_err(C(vn), xn))
    return max(errs)


def _matvec_case(vk, cpu, rng, name: str) -> float:
    """The one-token f32-activation matvec kernels (matvec_*) at every shape in MATVEC_SHAPES, or the
    8-bit-activation ones (mvq_*, 1-9 tokens: one dispatch per MVQ_ROWS) at every shape in MVQ_SHAPES (with and without subgroup
    shuffles where the adapter's subgroups are wide enough), 3 super-blocks a row, 37 rows; mvq against
    the NumPy backend on the 8-bit activations. Dispatches: the product (per MVQ_ROWS tokens), plus the
    activations' quantization for mvq."""
    from zinc.backends.vulkan.ops import MVQ_ROWS
    V, C = vk.from_numpy, vk.to_numpy
    kind, t = name.rsplit("_", 2)[0], "_".join(name.rsplit("_", 2)[1:])
    q8 = kind.startswith("mvq")
    K, N = 768, 37
    qa, qb = _qtensor(rng, t, (N, K)), _qtensor(rng, t, (N, K))
    wa, wb, ca, cb = vk.upload(qa), vk.upload(qb), cpu.upload(qa), cpu.upload(qb)
    bias = _rand(rng, N)
    sub0, errs = vk.dev.subgroups, []
    try:
        vk.matvec_q8 = q8
        for i, (L, R, S, sg) in enumerate(MVQ_SHAPES if q8 else MATVEC_SHAPES):
            vk.dev.subgroups = sub0 and sg
            vk.matvec = {"matvec": (L, R, S), "matvec_glu": (L, R, S), "mvq": (L, R, S), "mvq_glu": (L, R, S)}
            T = (1, 2, 3, 4, 9, 6)[i % 6] if q8 else 1
            x = _rand(rng, T, K, scale=2.0)
            xs = _q8(x) if q8 else x
            d0 = vk.stats["dispatches"]
            if kind.endswith("glu"):
                got, ref = vk.matmul_glu(V(x), wa, wb, "silu"), cpu.matmul_glu(xs, ca, cb, "silu")
            elif kind.endswith("bias"):
                got, ref = vk.add(vk.matmul(V(x), wa), V(bias)), cpu.add(cpu.matmul(xs, ca), bias)
            else:
                got, ref = vk.matmul(V(x), wa), cpu.matmul(xs, ca)
            errs += [_err(C(got), ref), float(vk.stats["dispatches"] - d0 != (-(-T // MVQ_ROWS) + 1 if q8 else 1))]
            if kind == "mvq_glu":
                errs.append(_glu_q8_out_case(vk, cpu, rng, t, T))
    finally:
        vk.dev.subgroups = sub0
        vk.matvec_q8 = True
        vk.matvec = dict(__import__("zinc.backends.vulkan.ops", fromlist=["x"]).MATVEC_CONFIG)
    return max(errs)


def _glu_q8_out_case(vk, cpu, rng, t: str, T: int) -> float:
    """gate/up of 512 rows, then a down projection of its output: with R * S % 32 == 0 the GLU kernel
    writes the 8-bit activations itself (the down product is then one dispatch per MVQ_ROWS tokens)."""
    from zinc.backends.vulkan.ops import MVQ_ROWS
    V, C = vk.from_numpy, vk.to_numpy
    K, N, M = 256, 512, 19
    wg, wu, wd = (_qtensor(rng, t, shape) for shape in ((N, K), (N, K), (M, N)))
    x = _rand(rng, T, K)
    y = vk.matmul_glu(V(x), vk.upload(wg), vk.upload(wu), "silu")
    y_ref = cpu.matmul_glu(_q8(x), cpu.upload(wg), cpu.upload(wu), "silu")
    L, R, S = vk.matvec["mvq_glu"]
    d0 = vk.stats["dispatches"]
    z = C(vk.matmul(y, vk.upload(wd)))
    n = vk.stats["dispatches"] - d0
    return max(_err(C(y), y_ref), _err(z, cpu.matmul(_q8(C(y)), cpu.upload(wd))),
               float(n != -(-T // MVQ_ROWS) + (0 if R * S % 32 == 0 else 1)))


def _norm4_case(vk, cpu, rng, name: str) -> float:
    """The vec4 rms_norm / add_rms_norm (D % 4 == 0) over a few shapes; q8_chain: a norm of a few rows
    writes the 8-bit activations that the next matvec reads (one dispatch for the product, no
    quantization), also through a reshape that keeps the rows."""
    V, C = vk.from_numpy, vk.to_numpy
    errs = []
    if name == "attention_q8":  # heads of 64: attention writes the 8-bit rows the output projection reads
        T, Hq, Hkv, D, S, N = 3, 4, 2, 64, 21, 19
        q, k, v = _rand(rng, T, Hq, D), _rand(rng, S, Hkv, D), _rand(rng, S, Hkv, D)
        kv_pos, q_pos = np.arange(S, dtype=np.int32), np.array([17, 18, 19], np.int32)
        o = vk.attention(*(V(a) for a in (q, k, v, q_pos, kv_pos)), 20, 0.125)
        ref = cpu.attention(q, k, v, q_pos, kv_pos, 20, 0.125)
        qt = _qtensor(rng, "Q6_K", (N, Hq * D))
        d0 = vk.stats["dispatches"]
        got = C(vk.matmul(vk.reshape(o, (T, Hq * D)), vk.upload(qt)))
        n = vk.stats["dispatches"] - d0
        want = cpu.matmul(_q8(C(o).reshape(T, Hq * D)), cpu.upload(qt))
        return max(_err(C(o), ref), _err(got, want), float(n != 1))
    if name == "q8_pair":  # two pending products of one input and weight type: one dispatch when one
        # weight's rows fill whole workgroups (Q next to K), else two; then a later lone product
        from zinc.backends.vulkan.ops import MVQ_ROWS
        errs = []
        R, S = vk.matvec["mvq"][1:]
        for t, N1, N2, T in (("Q4_K", 2 * R * S, 13, 1), ("Q6_K", 3 * R * S, 5, 6), ("Q4_K", 13, 2 * R * S, 1),
                             ("Q4_K", 13, 5, 2)):
            K = 512
            q1, q2, q3 = _qtensor(rng, t, (N1, K)), _qtensor(rng, t, (N2, K)), _qtensor(rng, t, (7, K))
            w1, w2, w3 = vk.upload(q1), vk.upload(q2), vk.upload(q3)
            x = _rand(rng, T, K)
            vx = V(x)
            vk._q8(vx)  # the activations first: the products alone are counted
            d0 = vk.stats["dispatches"]
            y1, y2 = vk.matmul(vx, w1), vk.matmul(vx, w2)
            g2, g1 = C(y2), C(y1)
            n = vk.stats["dispatches"] - d0
            g3 = C(vk.matmul(vx, w3))
            want = -(-T // MVQ_ROWS) * (1 if N1 % (R * S) == 0 or N2 % (R * S) == 0 else 2)
            errs += [_err(g1, cpu.matmul(_q8(x), cpu.upload(q1))), _err(g2, cpu.matmul(_q8(x), cpu.upload(q2))),
                     _err(g3, cpu.matmul(_q8(x), cpu.upload(q3))), float(n != want)]
        return max(errs)
    if name == "q8_split":  # a fused Q/K/V product split in 3: the matvec writes the 3 outputs itself
        K, T = 512, 3
        qt = _qtensor(rng, "Q4_K", (31, K))
        x = _rand(rng, T, K)
        vx = V(x)
        d0 = vk.stats["dispatches"]
        parts = vk.split(vk.matmul(vx, vk.upload(qt)), (16, 5, 10))
        got = [C(p) for p in parts]
        n = vk.stats["dispatches"] - d0
        y = cpu.matmul(_q8(x), cpu.upload(qt))
        two = vk.split(vk.matmul(vx, vk.upload(qt)), (20, 11))
        return max([_err(g, r) for g, r in zip(got, cpu.split(y, (16, 5, 10)))] + [float(n != 2)]
                   + [_err(C(g), r) for g, r in zip(two, cpu.split(y, (20, 11)))])
    if name == "rms_norm4":
        for rows, D, has_w in ((3, 36, True), (7, 1100, False), (2, 4608, True), (1, 256, True), (1, 4096, True),
                               (5, 3076, False)):
            x, r, w = _rand(rng, rows, D, scale=2.0), _rand(rng, rows, D), _rand(rng, D) if has_w else None
            vw = V(w) if w is not None else None
            errs.append(_err(C(vk.rms_norm(V(x), vw, 1e-6)), cpu.rms_norm(x, w, 1e-6)))
            (s, y), (rs, ry) = vk.add_rms_norm(V(x), V(r), vw, 1e-5), cpu.add_rms_norm(x, r, w, 1e-5)
            errs += [_err(C(s), rs), _err(C(y), ry)]
        return max(errs)
    for rows, K in ((1, 512), (3, 512), (2, 4608), (1, 4096)):  # 4608: the last 1024-value workgroup partial
        qt = _qtensor(rng, "Q4_K", (29, K))
        wv, wc = vk.upload(qt), cpu.upload(qt)
        x, r, w = _rand(rng, rows, K, scale=2.0), _rand(rng, rows, K), _rand(rng, K)
        for h in (vk.rms_norm(V(x), V(w), 1e-6), vk.add_rms_norm(V(x), V(r), V(w), 1e-6)[1],
                  vk.reshape(vk.rms_norm(V(x), V(w), 1e-6), (rows, 1, K))):
            d0 = vk.stats["dispatches"]
            got = C(vk.matmul(h, wv))
            errs += [_err(got, cpu.matmul(_q8(C(h)).reshape(rows, K), wc).reshape(got.shape)),
                     float(vk.stats["dispatches"] - d0 != 1)]
    return max(errs)


def _kernel_case(vk, cpu, name: str) -> float:
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    if name.startswith(("matvec_", "mvq_")):
        return _matvec_case(vk, cpu, rng, name)
    if name in ("rms_norm4", "q8_chain", "attention_q8", "q8_split", "q8_pair"):
        return _norm4_case(vk, cpu, rng, name)
    if name == "attention_rope_kv":
        return _attention_rope_case(vk, cpu, rng)
    if name.startswith("attention_split"):
        return _attention_split_case(vk, cpu, rng, name)
    if name in ("matmul_bias", "matmul_experts_bias"):
        return _bias_case(vk, cpu, rng, name)
    if name.startswith(("conv1d", "delta_net")):
        return _recurrent_case(vk, cpu, rng, name)
    if name.startswith(("matmul_experts_", "router_topk_", "weighted_sum")):
        return _moe_case(vk, cpu, rng, name)
    if name.startswith("norm_rope"):
        return _norm_rope_case(vk, cpu, rng, name)

    if name.startswith(("matmul_glu_", "add_rms_norm", "rope_kv_write")):
        return _fused_case(vk, cpu, rng, name)
    if name.startswith(("matmul_", "embed_")):
        return _weight_case(vk, cpu, rng, name)
    if name.startswith("attention"):
        return _attention_case(vk, cpu, rng, name)
    if name.startswith("rope"):
        return _rope_case(vk, cpu, rng, name)
    if name == "split_weight":
        return _split_weight_case(vk, cpu, rng)
    if name in ("split_slice", "kv_write", "fill"):
        return _memory_case(vk, cpu, rng, name)
    return _elementwise_case(vk, cpu, rng, name)


def _model_case(case: str, tmp: Path) -> dict:
    import time

    import zinc
    from zinc.synth import write_model

    preset, ftype = case.split(":")
    path = tmp / f"{preset}-{ftype}.gguf"
    write_model(path, preset, ftype=ftype, seed=1)
    ids = [int(i) for i in np.random.default_rng(2).integers(3, 200, 10)]
    ref_m = zinc.load(path, backend="cpu", n_ctx=64)
    vk_m = zinc.load(path, backend="vulkan", n_ctx=64, allow_cpu_adapter=True)
    out = {}
    for label, m in (("ref", ref_m), ("vk", vk_m)):
        t0 = time.perf_counter()
        cache = m.new_cache()
        pre = m.forward(ids[:7], cache)
        s0 = dict(m.ops.stats) if label == "vk" else {}
        dec = [m.forward([i], cache) for i in ids[7:]]
        if label == "vk":
            for key in ("dispatches", "submits"):
                out[f"{key}_per_decode_step"] = (m.ops.stats[key] - s0[key]) / len(dec)
        out[label] = np.concatenate([pre, *dec])
        out[f"{label}_s"] = time.perf_counter() - t0
    res = compare_logits(out["vk"], out["ref"])
    res.update(_steady_state_creations(vk_m, ids))
    res.update(dispatches_per_decode_step=out["dispatches_per_decode_step"],
               submits_per_decode_step=out["submits_per_decode_step"], n_layer=vk_m.config.n_layer,
               vulkan_s=round(out["vk_s"], 2), cpu_s=round(out["ref_s"], 2))
    return res


def _steady_state_creations(m, ids: list[int], steps: int = 7, last: int = 2) -> dict[str, float]:
    """Buffers and bind groups created per decode step once decode has settled (pooled buffers,
    cached uniforms and bind groups: none)."""
    dev = m.ops.dev
    cache = m.new_cache()
    m.forward(ids[:7], cache)
    for i in range(steps):
        if i == steps - last:
            b0, g0 = dev.n_buffers_created, dev.n_bind_groups_created
        m.forward([ids[i % len(ids)]], cache)
    return {"buffers_per_decode_step": (dev.n_buffers_created - b0) / last,
            "bind_groups_per_decode_step": (dev.n_bind_groups_created - g0) / last}


def _child(group: str) -> dict:
    """Run one group of cases on a fresh device; {"unavailable": reason} when there is none."""
    from zinc.backends import get_backend
    from zinc.backends.cpu import CpuOps
    from zinc.errors import BackendUnavailableError

    try:
        vk = get_backend("vulkan", allow_cpu_adapter=True)
    except BackendUnavailableError as e:
        return {"unavailable": str(e)}
    results: dict = {"adapter": vk.stats["adapter"]}
    cpu = CpuOps()
    with tempfile.TemporaryDirectory() as tmp:
        cases = {"kernels": KERNEL_CASES, "models": MODEL_CASES}[group]
        run = {"kernels": lambda n: _kernel_case(vk, cpu, n), "models": lambda n: _model_case(n, Path(tmp))}[group]
        for name in cases:
            try:
                results[name] = run(name)
            except Exception:  # noqa: BLE001 - reported to the parent, which fails that case
                results[name] = traceback.format_exc()
    return results


# ------------------------------------------------------------------------------------------ parent side


@pytest.fixture(scope="module")
def kernels(vulkan_child) -> dict:
    return vulkan_child(__file__, "kernels")


@pytest.fixture(scope="module")
def models(vulkan_child) -> dict:
    return vulkan_child(__file__, "models")


@pytest.mark.parametrize("case", KERNEL_CASES)
def test_kernel_matches_numpy(kernels, case):
    r = kernels[case]
    assert not isinstance(r, str), r
    tol = Q8_TOL.get(case, TOL)
    assert r <= tol, f"{case}: normalized error {r:.3g} > {tol}"


@pytest.mark.slow
@pytest.mark.parametrize("case", MODEL_CASES)
def test_tiny_model_logits_match_numpy(models, case):
    r = models[case]
    assert not isinstance(r, str), r
    assert r["argmax_agree"] == 1.0, r
    assert r["mean_kl"] <= 1e-3, r
    from zinc.backends.vulkan.device import SUBMIT_EVERY, SUBMIT_FIRST
    # no host sync inside a step: one command buffer after the first SUBMIT_FIRST dispatches and one per
    # SUBMIT_EVERY after that
    d = r["dispatches_per_decode_step"]
    assert r["submits_per_decode_step"] <= 1 + (d >= SUBMIT_FIRST) + max(0, d - SUBMIT_FIRST) // SUBMIT_EVERY, r
    assert r["buffers_per_decode_step"] == 0 and r["bind_groups_per_decode_step"] == 0, r  # host cost


def test_cpu_adapter_needs_explicit_opt_in():
    """Without allow_cpu_adapter a CPU-only machine gets a clear BackendUnavailableError."""
    pytest.importorskip("wgpu")
    code = ("from zinc.backends import get_backend\nfrom zinc.errors import BackendUnavailableError\n"
            "try:\n    ops = get_backend('vulkan')\n    print('ok', ops.stats['adapter_type'])\n"
            "except BackendUnavailableError as e:\n    print('unavailable', e)\n")
    env = {**__import__("os").environ, "XDG_RUNTIME_DIR": tempfile.gettempdir()}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    out = r.stdout.strip()
    assert out.startswith(("ok", "unavailable")), r.stderr[-2000:]
    if out.startswith("ok"):
        assert "CPU" not in out
    else:
        assert "allow_cpu_adapter" in out or "no Vulkan" in out


if __name__ == "__main__":
    print(json.dumps(_child(sys.argv[1])), flush=True)
