"""Row kernels: RMS norm (optionally times a weight), rope (NEOX / IMROPE and NORM pair layouts;
a few heads per program, optionally with the per-head norm and the K/V cache write, and Q and K
in one launch) and the GLU activations. Inputs are contiguous f32; every kernel writes a fresh output."""

from __future__ import annotations

import math

import numpy as np
import torch
import triton
import triton.language as tl

from zinc.backends.base import Q8Cells, RopeParams
from zinc.backends.cpu.ops import imrope_text_mask, yarn_corr_dims
from zinc.backends.cuda.kernels import kvq8


@triton.jit
def rms_norm_kernel(x, w, out, res, sum_out, out16, D, eps, HAS_W: tl.constexpr, HAS_RES: tl.constexpr,
                    BD: tl.constexpr, HALF: tl.constexpr = False):
    """out[r] = v / sqrt(mean(v^2) + eps) (* w) with v = x[r] (+ res[r], then stored to sum_out); grid (rows,).
    HALF: out[r] rounded to f16 also stored to out16."""
    row = tl.program_id(0).to(tl.int64)
    o = tl.arange(0, BD)
    m = o < D
    v = tl.load(x + row * D + o, mask=m, other=0.0)
    if HAS_RES:
        v = v + tl.load(res + row * D + o, mask=m, other=0.0)
        tl.store(sum_out + row * D + o, v, mask=m)
    ms = tl.sum(v * v, axis=0) / D
    y = v * (1.0 / tl.sqrt(ms + eps))
    if HAS_W:
        y = y * tl.load(w + o, mask=m, other=0.0)
    tl.store(out + row * D + o, y, mask=m)
    if HALF:
        tl.store(out16 + row * D + o, y.to(tl.float16), mask=m)


@triton.jit
def cos_sin(th):
    """(cos th, sin th) of f32 angles, rounded once from f64: th less the nearest multiple k of pi/2 (pi/2 as three
    f32 parts, so each k * part is exact in f64), then Taylor series on |r| <= pi/4, the quadrant from k & 3. Not
    libdevice's cosf / sinf, whose path for large angles keeps an array in local memory: with them the decode's
    fused rope + attention kernel had 236 registers and spilled (8 bytes), with this 168 and none (H200, Qwen3-8B
    synthetic: a decode step's replay 2,046 -> 2,034 us)."""
    x = th.to(tl.float64)
    k = tl.floor(x * 0.6366197723675814 + 0.5)
    r = x - k * 1.5707963705062866 + k * 4.371138828673793e-08 + k * 1.7151245100058819e-15
    r2 = r * r
    sn = r * (1.0 + r2 * (-1.6666666666666666e-01 + r2 * (8.333333333333333e-03 + r2 * (-1.984126984126984e-04 + r2 * (
        2.7557319223985893e-06 + r2 * (-2.505210838544172e-08 + r2 * 1.6059043836821613e-10))))))
    cs = 1.0 + r2 * (-0.5 + r2 * (4.1666666666666664e-02 + r2 * (-1.3888888888888889e-03 + r2 * (
        2.48015873015873e-05 + r2 * (-2.755731922398589e-07 + r2 * 2.08767569878681e-09)))))
    q = k.to(tl.int64) & 3
    c = tl.where(q == 0, cs, tl.where(q == 1, -sn, tl.where(q == 2, -cs, sn)))
    s = tl.where(q == 0, sn, tl.where(q == 1, cs, tl.where(q == 2, -sn, -cs)))
    return c.to(tl.float32), s.to(tl.float32)


@triton.jit
def _rope_heads(x, sx, w, out, pos, c, t, h0, H, Dh, eps, mscale, slots, ck, cv, cpos, v, sv, S, DV,
                NDIMS: tl.constexpr, NEOX: tl.constexpr, NORM: tl.constexpr, HAS_W: tl.constexpr, OUT: tl.constexpr,
                KV: tl.constexpr, FROM_POS: tl.constexpr, BH: tl.constexpr, HP: tl.constexpr, DP: tl.constexpr,
                BV: tl.constexpr):
    """Heads [h0, h0 + BH) of token t of x (T, H, Dh; sx values from one token's row to the next, its heads packed:
    a part of a fused projection's output as it is): rotate the first NDIMS dims of each by angle
    pos[t] * c[i] for pair i (NEOX pairs (i, i + NDIMS/2), NORM pairs (2i, 2i+1)), dims past NDIMS
    copied; stored to out (T, H, Dh) with OUT.

    NORM: each head is first RMS-normed (eps, times w (Dh,) with HAS_W). KV: the result also goes
    to the cache cell of the token (slots[t], or pos[t] % S when FROM_POS), with the same heads of
    v (T, H, DV; rows sv apart) beside it, and the block of head 0 stores the position in cpos."""
    half: tl.constexpr = NDIMS // 2
    i = tl.arange(0, HP)[None, :]
    h = h0 + tl.arange(0, BH)[:, None]
    hm = (h < H) & (i < half)
    p = tl.load(pos + t)
    th = p.to(tl.float32) * tl.load(c + i, mask=i < half, other=0.0)
    cs, sn = cos_sin(th)
    cs = cs * mscale
    sn = sn * mscale
    if NEOX:
        i0 = i
        i1 = i + half
    else:
        i0 = 2 * i
        i1 = 2 * i + 1
    base = t.to(tl.int64) * H * Dh + h * Dh
    xb = t.to(tl.int64) * sx + h * Dh
    x0 = tl.load(x + xb + i0, mask=hm, other=0.0)
    x1 = tl.load(x + xb + i1, mask=hm, other=0.0)
    d = tl.arange(0, DP)[None, :]
    rest = (h < H) & (d >= NDIMS) & (d < Dh)  # the dims rope leaves alone
    xr = tl.load(x + xb + d, mask=rest, other=0.0)
    if NORM:
        full = tl.load(x + xb + d, mask=(h < H) & (d < Dh), other=0.0)
        inv = 1.0 / tl.sqrt(tl.sum(full * full, axis=1) / Dh + eps)[:, None]
        x0 = x0 * inv
        x1 = x1 * inv
        xr = xr * inv
        if HAS_W:
            x0 = x0 * tl.load(w + i0, mask=i < half, other=0.0)
            x1 = x1 * tl.load(w + i1, mask=i < half, other=0.0)
            xr = xr * tl.load(w + d, mask=(d >= NDIMS) & (d < Dh), other=0.0)
    y0 = x0 * cs - x1 * sn
    y1 = x0 * sn + x1 * cs
    if OUT:
        tl.store(out + base + i0, y0, mask=hm)
        tl.store(out + base + i1, y1, mask=hm)
        tl.store(out + base + d, xr, mask=rest)
    if KV:
        if FROM_POS:
            cell = (p % S).to(tl.int64)
        else:
            cell = tl.load(slots + t).to(tl.int64)
        cb = cell * H * Dh + h * Dh
        ty = ck.dtype.element_ty
        tl.store(ck + cb + i0, y0.to(ty), mask=hm)
        tl.store(ck + cb + i1, y1.to(ty), mask=hm)
        tl.store(ck + cb + d, xr.to(ty), mask=rest)
        ov = tl.arange(0, BV)[None, :]
        vm = (h < H) & (ov < DV)
        vv = tl.load(v + t.to(tl.int64) * sv + h * DV + ov, mask=vm)
        tl.store(cv + cell * H * DV + h * DV + ov, vv.to(cv.dtype.element_ty), mask=vm)
        tl.store(cpos + cell, p, mask=h0 == 0)


@triton.jit
def rope_kernel(x, sx, w, pos, c, out, slots, ck, cv, cpos, v, sv, H, Dh, S, DV, eps, mscale, NDIMS: tl.constexpr,
                NEOX: tl.constexpr, NORM: tl.constexpr, HAS_W: tl.constexpr, KV: tl.constexpr,
                FROM_POS: tl.constexpr, BH: tl.constexpr, HP: tl.constexpr, DP: tl.constexpr, BV: tl.constexpr):
    """`_rope_heads` of x (T, H, Dh) into out (and the cache with KV); grid (T, cdiv(H, BH))."""
    _rope_heads(x, sx, w, out, pos, c, tl.program_id(0), tl.program_id(1) * BH, H, Dh, eps, mscale, slots, ck, cv,
                cpos, v, sv, S, DV, NDIMS, NEOX, NORM, HAS_W, True, KV, FROM_POS, BH, HP, DP, BV)


@triton.jit
def rope_qk_kernel(q, sq, qw, qout, k, sk, kw, pos, c, slots, ck, cv, cpos, v, sv, HQ, HK, Dh, S, DV, eps, mscale,
                   NDIMS: tl.constexpr, NEOX: tl.constexpr, QNORM: tl.constexpr, KNORM: tl.constexpr,
                   FROM_POS: tl.constexpr, BH: tl.constexpr, HP: tl.constexpr, DP: tl.constexpr, BV: tl.constexpr):
    """q (T, HQ, Dh) and k (T, HK, Dh) in one launch, grid (T, cdiv(HQ, BH) + cdiv(HK, BH)): the
    first blocks of heads rope q into qout, the rest rope k into the cache cells (with v beside it).
    QNORM / KNORM: that side is first RMS-normed per head and times its weight qw / kw (Dh,)."""
    t = tl.program_id(0)
    b = tl.program_id(1)
    nq = tl.cdiv(HQ, BH)
    if b < nq:
        _rope_heads(q, sq, qw, qout, pos, c, t, b * BH, HQ, Dh, eps, mscale, slots, ck, cv, cpos, v, sv, S, DV, NDIMS,
                    NEOX, QNORM, QNORM, True, False, FROM_POS, BH, HP, DP, BV)
    else:
        _rope_heads(k, sk, kw, k, pos, c, t, (b - nq) * BH, HK, Dh, eps, mscale, slots, ck, cv, cpos, v, sv, S, DV,
                    NDIMS, NEOX, KNORM, KNORM, False, True, FROM_POS, BH, HP, DP, BV)


@triton.jit
def glu_act(a, b, ACT: tl.constexpr):
    """act(a) * b; ACT 0 silu, 1 gelu (tanh), 2 swiglu_oai (clamped, alpha 1.702, up + 1)."""
    if ACT == 0:
        y = a / (1.0 + tl.exp(-a)) * b
    elif ACT == 1:
        inner = 0.7978845608028654 * a * (1.0 + 0.044715 * a * a)
        th = 2.0 / (1.0 + tl.exp(-2.0 * inner)) - 1.0
        y = 0.5 * a * (1.0 + th) * b
    else:
        xa = tl.minimum(a, 7.0)
        yb = tl.minimum(tl.maximum(b, -7.0), 7.0)
        y = xa / (1.0 + tl.exp(-1.702 * xa)) * (yb + 1.0)
    return y


@triton.jit
def glu_kernel(g, u, out, n, ACT: tl.constexpr, BLOCK: tl.constexpr):
    """out = act(g) * u elementwise (see `glu_act`); grid (cdiv(n, BLOCK),)."""
    o = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    a = tl.load(g + o, mask=m, other=0.0)
    b = tl.load(u + o, mask=m, other=0.0)
    tl.store(out + o, glu_act(a, b, ACT), mask=m)


GLU_ACTS = {"silu": 0, "gelu": 1, "swiglu_oai": 2}


def rms_norm(x, w, eps: float, out, res=None, sum_out=None, out16=None) -> None:
    """out = rms_norm(x (+ res)) (* w); with `res`, x + res is also stored to `sum_out`; out16: out in f16 too."""
    d = x.shape[-1]
    rows = x.numel() // d
    rms_norm_kernel[(rows,)](x, w if w is not None else x, out, res if res is not None else x,
                             sum_out if sum_out is not None else out, out16 if out16 is not None else out, d, eps,
                             HAS_W=w is not None, HAS_RES=res is not None, BD=triton.next_power_of_2(d),
                             HALF=out16 is not None, num_warps=4 if d >= 1024 else 1)


@triton.jit
def kv_write_kernel(k, v, pos, slots, ck, cv, cpos, ckd, cvd, S, NK, NV, FROM_POS: tl.constexpr, BK: tl.constexpr,
                    BV: tl.constexpr, Q8: tl.constexpr = False):
    """Cell c of token t (slots[t], or pos[t] % S): ck[c] = k[t], cv[c] = v[t], cpos[c] = pos[t]; grid (T,).
    Q8: the cells are q8_0 (`kvq8`), values in ck / cv and scales in ckd / cvd."""
    t = tl.program_id(0)
    p = tl.load(pos + t)
    if FROM_POS:
        c = (p % S).to(tl.int64)
    else:
        c = tl.load(slots + t).to(tl.int64)
    if Q8:
        b = tl.arange(0, BK // 32)[:, None] * 32 + tl.arange(0, 32)[None, :]
        kvq8.store(tl.load(k + t * NK + b, mask=b < NK, other=0.0), ck + c * NK, ckd + c * (NK // 32), NK // 32,
                   True, BK // 32)
        b = tl.arange(0, BV // 32)[:, None] * 32 + tl.arange(0, 32)[None, :]
        kvq8.store(tl.load(v + t * NV + b, mask=b < NV, other=0.0), cv + c * NV, cvd + c * (NV // 32), NV // 32,
                   True, BV // 32)
    else:
        ok = tl.arange(0, BK)
        ov = tl.arange(0, BV)
        kv = tl.load(k + t * NK + ok, mask=ok < NK)
        tl.store(ck + c * NK + ok, kv.to(ck.dtype.element_ty), mask=ok < NK)
        vv = tl.load(v + t * NV + ov, mask=ov < NV)
        tl.store(cv + c * NV + ov, vv.to(cv.dtype.element_ty), mask=ov < NV)
    tl.store(cpos + c, p)


def kv_write(k, v, pos, slots, ck, cv, cpos, from_pos: bool) -> None:
    """k (T, Hkv, Dk), v (T, Hkv, Dv) into the cache cells of each token (ck, cv: f16 / f32 tensors,
    or `Q8Cells`)."""
    k, v = k.contiguous(), v.contiguous()
    t = k.shape[0]
    nk, nv = k[0].numel(), v[0].numel()
    q8 = isinstance(ck, Q8Cells)
    (ck, ckd), (cv, cvd) = kvq8.planes(ck), kvq8.planes(cv)
    kv_write_kernel[(t,)](k, v, pos, slots if slots is not None else pos, ck, cv, cpos, ckd, cvd, ck.shape[0], nk,
                          nv, FROM_POS=from_pos, BK=max(32, triton.next_power_of_2(nk)),
                          BV=max(32, triton.next_power_of_2(nv)), Q8=q8, num_warps=4)


ROPE_BLOCK = 256  # elements (heads x padded head dim) per program of the rope kernels


def _rope_meta(h: int, dh: int, n_dims: int, dv: int) -> tuple[dict, int]:
    """The rope kernels' block sizes (a few heads per program) and warps per program."""
    dp = triton.next_power_of_2(dh)
    bh = max(1, min(triton.next_power_of_2(h), ROPE_BLOCK // dp))
    meta = dict(BH=bh, HP=triton.next_power_of_2(max(1, n_dims // 2)), DP=dp, BV=triton.next_power_of_2(dv))
    return meta, max(1, min(4, bh * dp // 128))


def packed_rows(x: torch.Tensor) -> tuple[torch.Tensor, int]:
    """x and the distance between its rows (x[t]), each row contiguous as the rope kernels read them: a part of a
    fused projection's output as it is (no copy a launch), anything else as a contiguous copy."""
    if x.shape[0] and not x[0].is_contiguous():
        x = x.contiguous()
    return x, x.stride(0)


def rope(x, pos, c, mscale: float, n_dims: int, neox: bool, out, norm_w=None, eps: float = 0.0, norm: bool = False,
         kv=None) -> None:
    """out = rope(x) (T, H, Dh); `norm`: RMS-norm each head first (times norm_w if given);
    kv = (v, slots, cache_k, cache_v, cache_pos, from_pos): also store the result and v in the cache."""
    t, h, dh = x.shape
    if kv is not None and (kv[0][0].numel() % h or isinstance(kv[2], Q8Cells)):  # a separate cache write (v not
        # split into x's heads, or q8_0 cells)
        rope(x, pos, c, mscale, n_dims, neox, out, norm_w, eps, norm)
        v, slots, ck, cv, cpos, from_pos = kv
        kv_write(out, v, pos, slots, ck, cv, cpos, from_pos)
        return
    x, sx = packed_rows(x)
    v, slots, ck, cv, cpos, from_pos = kv if kv is not None else (x, pos, x, x, pos, False)
    v, sv = packed_rows(v)
    dv = v[0].numel() // h if kv is not None else 1
    meta, warps = _rope_meta(h, dh, n_dims, dv)
    rope_kernel[(t, triton.cdiv(h, meta["BH"]))](
        x, sx, norm_w if norm_w is not None else x, pos, c, out, slots if slots is not None else pos, ck, cv, cpos, v,
        sv, h, dh, ck.shape[0], dv, eps, mscale, NDIMS=n_dims, NEOX=neox, NORM=norm, HAS_W=norm_w is not None,
        KV=kv is not None, FROM_POS=from_pos, num_warps=warps, **meta)


def rope_qk(q, k, pos, c, mscale: float, n_dims: int, neox: bool, q_out, kv, q_w=None, k_w=None,
            eps: float = 0.0) -> None:
    """q_out = rope(q) (T, Hq, Dh) and rope(k) (T, Hkv, Dh) into the cache with v beside it, in one
    launch; q_w / k_w: RMS-norm each head of that side first, times the weight.
    kv = (v (T, Hkv, Dv), slots, cache_k, cache_v, cache_pos, from_pos)."""
    t, hq, dh = q.shape
    hk = k.shape[1]
    v, slots, ck, cv, cpos, from_pos = kv
    if isinstance(ck, Q8Cells):  # q8_0 cells: Q's rope, then K's rope with its cache write
        rope(q, pos, c, mscale, n_dims, neox, q_out, q_w, eps, q_w is not None)
        rope(k, pos, c, mscale, n_dims, neox, k.new_empty(k.shape), k_w, eps, k_w is not None, kv=kv)
        return
    (q, sq), (k, sk), (v, sv) = packed_rows(q), packed_rows(k), packed_rows(v)
    dv = v[0].numel() // hk
    meta, warps = _rope_meta(max(hq, hk), dh, n_dims, dv)
    nb = triton.cdiv(hq, meta["BH"]) + triton.cdiv(hk, meta["BH"])
    rope_qk_kernel[(t, nb)](
        q, sq, q_w if q_w is not None else q, q_out, k, sk, k_w if k_w is not None else k, pos, c,
        slots if slots is not None else pos, ck, cv, cpos, v, sv, hq, hk, dh, ck.shape[0], dv, eps, mscale,
        NDIMS=n_dims, NEOX=neox, QNORM=q_w is not None, KNORM=k_w is not None, FROM_POS=from_pos,
        num_warps=warps, **meta)


def glu(g, u, act: str, out, block: int = 1024) -> None:
    n = g.numel()
    glu_kernel[(triton.cdiv(n, block),)](g, u, out, n, ACT=GLU_ACTS[act], BLOCK=block, num_warps=4)


ARGMAX_BLOCK = 4096  # values a program of the first argmax pass


@triton.jit
def argmax_part_kernel(x, n, best, where, BLOCK: tl.constexpr):
    """Pass 1 of `greedy_next`: the max of x[b*BLOCK : (b+1)*BLOCK] (NaN counts as -inf) and its first index."""
    b = tl.program_id(0)
    o = b * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + o, mask=o < n, other=float("-inf"))
    v = tl.where(v == v, v, float("-inf"))
    m = tl.max(v, axis=0)
    i = tl.min(tl.where(v == m, o, n), axis=0)  # the first index of the max (ties go left, as torch.argmax)
    tl.store(best + b, m)
    tl.store(where + b, i)


@triton.jit
def greedy_next_kernel(best, where, nparts, n, tokens, pos, chosen, count, NP: tl.constexpr):
    """Pass 2, one program: the argmax over the passes' partial maxima becomes the next step's token,
    the position advances by one and the id is appended to chosen at count (then count + 1)."""
    o = tl.arange(0, NP)
    m = o < nparts
    v = tl.load(best + o, mask=m, other=float("-inf"))
    i = tl.load(where + o, mask=m, other=n)
    top = tl.max(v, axis=0)
    tok = tl.min(tl.where(v == top, i, n), axis=0)
    tok = tl.where(tok < n, tok, 0).to(tl.int32)  # every value NaN or -inf: token 0 (as torch.argmax of -inf)
    tl.store(tokens, tok)
    tl.store(pos, tl.load(pos) + 1)
    c = tl.load(count)
    tl.store(chosen + c, tok)
    tl.store(count, c + 1)


def greedy_next(logits, tokens, pos, chosen, count, block: int = 0) -> None:
    """tokens[0] = argmax(logits) (f32, contiguous), pos[0] += 1, chosen[count] = that id, count += 1: the end
    of a graph-captured greedy step in two launches (tokens, pos, chosen int32; count int64)."""
    n = logits.numel()
    block = block or ARGMAX_BLOCK
    parts = triton.cdiv(n, block)
    best = torch.empty((parts,), dtype=torch.float32, device=logits.device)
    where = torch.empty((parts,), dtype=torch.int32, device=logits.device)
    argmax_part_kernel[(parts,)](logits, n, best, where, BLOCK=block, num_warps=min(8, max(1, block // 512)))
    greedy_next_kernel[(1,)](best, where, parts, n, tokens, pos, chosen, count,
                             NP=max(16, triton.next_power_of_2(parts)), num_warps=4)


def rope_factors(p: RopeParams, freq_factors: np.ndarray | None, device) -> tuple[torch.Tensor, float]:
    """(c (n_dims/2,) f32 on the device, mscale): rope_cache's angles as pos * c[i], the table `rope` / `rope_qk` take."""
    half = p.n_dims // 2
    c = np.empty(half, np.float32)
    t = np.float32(1.0)
    ts = np.power(np.float32(p.freq_base), np.float32(-2.0) / np.float32(p.n_dims))
    for i in range(half):
        c[i] = t
        t = np.float32(t * ts)
    if p.mode == "imrope":
        c = c * imrope_text_mask(p.sections, half)
    if freq_factors is not None:
        c = c / freq_factors[:half].astype(np.float32)
    mscale = float(p.attn_factor)
    interp = np.float32(p.freq_scale) * c
    if p.ext_factor != 0.0:
        lo, hi = yarn_corr_dims(p)
        y = (np.arange(half, dtype=np.float32) - lo) / np.float32(max(0.001, hi - lo))
        ramp = (1 - np.minimum(1, np.maximum(0, y))) * np.float32(p.ext_factor)
        interp = interp * (1 - ramp) + c * ramp
        mscale *= 1.0 + 0.1 * math.log(1.0 / p.freq_scale)
    return torch.from_numpy(interp.astype(np.float32)).to(device), mscale

