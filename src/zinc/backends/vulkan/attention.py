"""The attention dispatches of the Vulkan backend (`VulkanOps.attention`).

Several tokens (prefill): `attention.wgsl`, one workgroup per (token, query head) over all cells.
One token (decode): split over the cache, `attention_split.wgsl` on a grid (Hkv G, NS): one workgroup
per (kv head, group of up to 4 of its R query heads, split of the cells), so a cell is read once per
group, then `attn_combine.wgsl` merges the splits per query head (NS == 1: pass 1 writes the output
itself, one dispatch). NS depends on the cache size S only (`n_split`), so a recorded step replays
with the same grids whatever the step's extent n_kv (read on the GPU from the step buffer).
Both forms can do the deferred one-token rope_qk_kv_write (FUSE: norms, rope, cache write) in their
first dispatch and write the output's 8-bit rows for the output projection (`VkArray.q8`).
"""

from __future__ import annotations

from typing import Any

from zinc.backends.vulkan.device import grid
from zinc.backends.vulkan.matvec import MVQ_ROWS, _q8_row_words

SPLIT_CELLS = 256  # cells per split of the cache at most when NS < MAX_SPLITS
MAX_SPLITS = 32


def n_split(S: int) -> int:
    """Splits of a cache of S cells for one-token attention: ceil(S / SPLIT_CELLS) in [1, MAX_SPLITS]."""
    return max(1, min(MAX_SPLITS, -(-int(S) // SPLIT_CELLS)))


def head_groups(R: int) -> int:
    """Pass-1 workgroups per kv head: its R query heads in groups of 4 (the components of a vec4)."""
    return -(-R // 4)


def record_attention(ops: Any, q, k, v, q_pos, kv_pos, n_kv: int, kq_scale: float, window: int, softcap: float,
                     sinks, fused: tuple | None, split: bool = True):
    """Record the attention of q (T, Hq, Dh) over the cache k (S, Hkv, Dh), v (S, Hkv, Dv) -> (T, Hq, Dv);
    fused: the deferred rope_qk_kv_write's (args, q_norm, k_norm, eps) whose q this is (T == 1)."""
    dev = ops.dev
    if fused is not None:
        (qr, kr, vr, _, p, ff, _, _, _, slots), q_norm, k_norm, eps = fused
    T, Hq, Dh = q.shape
    S, Hkv, Dv = k.shape[0], k.shape[1], v.shape[2]
    if Dh > 256 or Dv > 256:
        raise ValueError(f"vulkan attention: head dims {Dh}/{Dv} exceed 256")
    o = ops._new((T, Hq, Dv))
    rope = (p.n_dims, int(p.mode != "norm"), int(q_norm is not None), int(k_norm is not None), eps) if fused \
        else (0, 0, 0, 0, 0.0)
    one = split and T == 1 and Hq % Hkv == 0
    NS, G = (n_split(S), head_groups(Hq // Hkv)) if one else (T, 0)
    u = dev.uniform("IIIIIIIIffIIIIf", NS, Hq, Hkv, Dh, Dv, G, int(window), int(sinks is not None),
                    float(kq_scale), float(softcap), *rope)
    q8 = ops.matvec_q8 and T <= MVQ_ROWS and Dv % 32 == 0 and Hq * Dv % 256 == 0  # for the output projection
    if q8:
        o.q8 = (Hq * Dv, dev.buffer(4 * T * _q8_row_words(Hq * Dv)))
    rd, wr = ops._dummy, ops._dummy_w
    extra = [rd] * 6
    if fused is not None:
        extra = [kr.buf, vr.buf, q_norm.buf if q_norm is not None else rd, k_norm.buf if k_norm is not None else rd,
                 ops._rope_table(q_pos, p, ff), slots.buf]
    ws = dev.buffer(4 * Hq * NS * (Dv + 2)) if one and NS > 1 else o.buf  # pass 1's (m, l, o) per split
    qo = o.q8[1] if q8 else wr
    sk = sinks.buf if sinks is not None else rd
    bufs = [(qr if fused else q).buf, k.buf, v.buf, q_pos.buf, kv_pos.buf, sk, ws,
            ops._n_kv(int(n_kv), S, q_pos), qo if ws is o.buf else wr, *extra]
    nc = max(4, 1 << (max(1, -(-Dv // 4)) - 1).bit_length())  # column slots: a power of two >= Dv / 4
    subs = {"Q8": "true" if q8 else "false", "FUSE": "true" if fused else "false", "DH": str(Dh), "DV": str(Dv),
            "QN": str(-(-Dh // 4)), "NC": str(nc)}
    if not one:
        ops._run("attention", u, bufs, grid(T * Hq), subs)
        return o
    ops._run("attention_split", u, bufs, (Hkv * G, NS, 1), {**subs, **_unrolled(Dh, nc)})
    if NS > 1:
        oloads = "\n".join(f"    os[{s}] = WS[base + {s * (Dv + 2) + 2}u + d];" for s in range(NS))
        osum = "\n".join(f"    w = exp(ml[{s}] - mf);\n    den += w * ml[{NS + s}];\n    o += w * os[{s}];"
                          for s in range(NS))
        ops._run("attn_combine", u, [sk, ws, o.buf, qo], (Hq, 1, 1),
                 {"Q8": subs["Q8"], "DV": str(Dv), "NS": str(NS), "OLOADS": oloads, "OSUM": osum})
    return o



def _unrolled(Dh: int, NC: int) -> dict[str, str]:
    """attention_split.wgsl's per-tile loops written out: the NVIDIA driver keeps such WGSL loops rolled,
    and then waits for each load before the next and keeps the arrays in local memory."""
    QN, NSL = -(-Dh // 4), 256 // NC
    loads = [f"kv[{i}] = k_at(kb, qpart + {4 * i}u, own);" for i in range(QN)]
    loads += [f"vr[{4 * i + j}] = v_at(t0 + ks + {NSL * i}u, c + {NC * j}u, c1, hk, sl);"
              for i in range(NC // 4) for j in range(4)]
    dots = [f"dot4 += qs[min(qpart + {4 * i}u, DH - 1u)] * kv[{i}];" for i in range(QN)]
    vsum = []
    for i in range(NC // 4):
        k = f"ks + {NSL * i}u"
        vsum.append(f"pv = vec4<f32>(pj[{k}], pj[64u + {k}], pj[128u + {k}], pj[192u + {k}]);")
        vsum += [f"acc{j} += pv * vr[{4 * i + j}];" for j in range(4)]
    return {k: "\n".join("        " + ln for ln in v) for k, v in (("LOADS", loads), ("DOTS", dots), ("VSUM", vsum))}
