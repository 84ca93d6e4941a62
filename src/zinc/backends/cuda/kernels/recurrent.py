"""Recurrent-layer ops of the CUDA backend: causal conv1d and the gated delta rule.

Same functions as the NumPy backend's `zinc.backends.cpu.deltanet` (read its docstring for the
math), with no host sync, so a single-token step can be captured in a CUDA graph. States (the conv
window and the (Hv, S, S) delta-rule matrices) are updated in place.
Each op of a step is one Triton kernel: `conv1d_kernel` (the depthwise taps, optionally silu, and the
window shift; steps of up to CONV_MAX_T tokens; longer ones `conv1d_tiles_kernel`), `delta_rule_kernel`
(the token-by-token delta rule: decay, delta update and output of every token, the state held in
registers between them; in its RAW form also the gates and the q/k L2 norms from the raw
projections) and `gated_norm_kernel` (the output's RMS norm times silu of the gate). The chunked
form (prefill) solves the unit lower-triangular system of each chunk with torch's triangular solve between two
kernels: `chunk_prep_kernel` (every chunk's products, decays and, from the raw projections, the gates and q/k
norms: was ~40 torch launches a layer) and `chunk_state_kernel` (the state from chunk to chunk, and the output).
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from zinc.backends.cuda.kernels.mmvq import q8_store

CONV_MAX_T = 64  # up to this many tokens conv1d runs `conv1d_kernel` (one program walks all the tokens)
DELTA_BV = 16  # value-dim columns of the state per program of `delta_rule_kernel`
DELTA_SEQS = (16, 4)  # (value-dim columns, warps) a program of its batched form (`conv_delta_seqs`)
CONV_BC = 256  # channels per program of `conv1d_kernel` and `conv1d_tiles_kernel`
CONV_BT = 32  # tokens per program of `conv1d_tiles_kernel` (a prompt past CONV_MAX_T tokens)
CHUNK_BV = 32  # value-dim columns of the state per program of `chunk_state_kernel`


@triton.jit
def _seq_state(table, col: tl.constexpr):
    """The f32 state at the address in column col of a table row (`conv_delta_seqs`), 16-byte aligned (as
    `CudaOps.kv_tables` checks: the state's loads and stores vectorized)."""
    return tl.multiple_of(tl.load(table + col).to(tl.pointer_type(tl.float32)), 16)


@triton.jit(do_not_specialize=["T"])  # T = 1 stays a runtime value: the window-row tests are on tensors
def conv1d_kernel(x, state, w, out, T, C, sx, K: tl.constexpr, BC: tl.constexpr, SILU: tl.constexpr = False,
                  TABLE: tl.constexpr = False):
    """Depthwise causal conv over the window [state (K-1, C), x (T, C), row stride sx] (oldest first):
    out[t, c] = sum_j win[t + j, c] * w[c, j] in tap order (then silu(out) with SILU); then
    state = win[T:]; grid (cdiv(C, BC),).
    Each program owns its channels, so the window is read before it is shifted in place.
    TABLE: grid (cdiv(C, BC), B), B sequences of one token (T = 1): x and out row b, the state of sequence b
    at the address in column 0 of row b of `state`, a (B, 4) int64 table (`conv_delta_seqs`)."""
    if TABLE:
        seq = tl.program_id(1)
        state = _seq_state(state + seq * 4, 0)
        x += seq * sx
        out += seq * C
    c = tl.program_id(0) * BC + tl.arange(0, BC)
    cm = c < C
    for t in range(T):
        acc = tl.zeros([BC], dtype=tl.float32)
        for j in tl.static_range(K):
            r = t + j  # window row: state row r if r < K-1, else x row r - (K-1)
            a = tl.load(state + r * C + c, mask=cm & (r < K - 1), other=0.0)
            b = tl.load(x + (r - (K - 1)) * sx + c, mask=cm & (r >= K - 1), other=0.0)
            tap = tl.load(w + c * K + j, mask=cm, other=0.0)
            acc = acc + tl.where(r < K - 1, a, b) * tap
        if SILU:
            acc = acc / (1.0 + tl.exp(-acc))
        tl.store(out + t * C + c, acc, mask=cm)
    for i in tl.static_range(K - 1):  # row i of the new state: window row T + i (rows > i not yet written)
        r = T + i
        a = tl.load(state + r * C + c, mask=cm & (r < K - 1), other=0.0)
        b = tl.load(x + (r - (K - 1)) * sx + c, mask=cm & (r >= K - 1), other=0.0)
        tl.store(state + i * C + c, tl.where(r < K - 1, a, b), mask=cm)


@triton.jit
def conv1d_tiles_kernel(x, state, w, out, T, C, sx, K: tl.constexpr, BT: tl.constexpr, BC: tl.constexpr,
                        SILU: tl.constexpr = False):
    """`conv1d_kernel` for a prompt (T >= BT >= K - 1): program (tb, cb) computes tokens tb * BT ... of channels
    cb * BC ...; only the first token block reads the old state, and it writes the new one (the last K - 1 rows of
    x) after its reads; grid (cdiv(T, BT), cdiv(C, BC))."""
    tb = tl.program_id(0)
    t = tb * BT + tl.arange(0, BT)
    c = tl.program_id(1) * BC + tl.arange(0, BC)
    tm, cm = t < T, c < C
    acc = tl.zeros([BT, BC], dtype=tl.float32)
    for j in tl.static_range(K):
        r = t + j  # window row: state row r if r < K-1, else x row r - (K-1)
        m = tm[:, None] & cm[None, :]
        a = tl.load(state + r[:, None] * C + c[None, :], mask=m & (r < K - 1)[:, None], other=0.0)
        b = tl.load(x + (r - (K - 1))[:, None].to(tl.int64) * sx + c[None, :], mask=m & (r >= K - 1)[:, None],
                    other=0.0)
        acc = acc + tl.where((r < K - 1)[:, None], a, b) * tl.load(w + c * K + j, mask=cm, other=0.0)[None, :]
    if SILU:
        acc = acc / (1.0 + tl.exp(-acc))
    tl.store(out + t[:, None].to(tl.int64) * C + c[None, :], acc, mask=tm[:, None] & cm[None, :])
    if tb == 0:
        for i in tl.static_range(K - 1):  # new state row i: x row T - (K-1) + i
            xr = tl.load(x + (T - (K - 1) + i).to(tl.int64) * sx + c, mask=cm, other=0.0)
            tl.store(state + i * C + c, xr, mask=cm)


def _rows_f32(x: torch.Tensor) -> torch.Tensor:
    """x itself where it is f32 with each x[t] contiguous (the kernels take the token stride: the parts of a
    column-sliced stacked projection are read in place), else a contiguous f32 copy."""
    return x if x.dtype == torch.float32 and (x.numel() == 0 or x[0].is_contiguous()) else x.float().contiguous()


def conv1d_causal(x: torch.Tensor, state: torch.Tensor, w: torch.Tensor, silu: bool = False) -> torch.Tensor:
    """Depthwise causal conv of x (T, C) over [state (K-1, C), x] (then silu with `silu`); state keeps
    the last K-1 inputs. One launch: `conv1d_kernel` for a few tokens, `conv1d_tiles_kernel` for a prompt."""
    T, K = x.shape[0], w.shape[1]
    if state.is_contiguous() and state.dtype == torch.float32 and (T <= CONV_MAX_T or T >= CONV_BT >= K - 1):
        x, w = _rows_f32(x), w.float().contiguous()  # a column slice (row stride of its own) is read in place
        C = x.shape[1]
        out = torch.empty((T, C), dtype=torch.float32, device=x.device)
        if T <= CONV_MAX_T:
            conv1d_kernel[(triton.cdiv(C, CONV_BC),)](x, state, w, out, T, C, x.stride(0), K=K, BC=CONV_BC,
                                                      SILU=bool(silu), num_warps=2)
        else:
            conv1d_tiles_kernel[(triton.cdiv(T, CONV_BT), triton.cdiv(C, CONV_BC))](
                x, state, w, out, T, C, x.stride(0), K=K, BT=CONV_BT, BC=CONV_BC, SILU=bool(silu), num_warps=4)
        return out
    win = torch.cat([state, x.float()], dim=0)  # (T + K - 1, C), oldest first
    y = win[0:T] * w[:, 0]
    for j in range(1, K):  # f32 sum over the taps in order
        y = y + win[j:j + T] * w[:, j]
    state.copy_(win[T:])
    return torch.nn.functional.silu(y) if silu else y


def _tiled(x: torch.Tensor, n_v: int) -> torch.Tensor:
    """q or k heads (T, Hk, S) repeated for Hv value heads: v-head h reads k-head h % Hk."""
    n_k = x.shape[1]
    return x if n_k == n_v else x.repeat(1, n_v // n_k, 1)


@triton.jit
def delta_rule_kernel(q, k, v, g, beta, state, out, T, HK, HV, SK, SV, scale, dt_bias, a_log, eps,
                      BK: tl.constexpr, BV: tl.constexpr, RAW: tl.constexpr = False, TABLE: tl.constexpr = False,
                      RS=0):
    """The delta rule over T tokens for value head h and state columns [jb*BV, jb*BV + BV); grid (Hv,
    cdiv(SV, BV)). q, k (T, HK, SK) (v-head h reads k-head h % HK), v (T, HV, SV), g, beta (T, HV),
    state (HV, SK, SV) in place, out (T, HV, SV). Per token: s *= exp(g); d = beta (v - s^T k);
    s += k d^T; o = s^T q * scale. A column of the state depends only on itself, so the columns split.
    RAW: g holds alpha and beta its logit, q and k are not normalized; per token the kernel takes
    g = softplus(alpha + dt_bias[h]) * a_log[h], beta = sigmoid(beta) and q, k = l2_norm(q, k) as
    `BaseOps.delta_net_step` does (x / sqrt(sum x^2 / SK + eps / SK) / sqrt(SK)).
    TABLE: grid (Hv, cdiv(SV, BV), B), B sequences of one token (T = 1): q, k, v rows b of row stride RS, g, beta
    and out rows b, the state of sequence b at the address in column 1 of row b of `state` (a (B, 4) table)."""
    if TABLE:
        b = tl.program_id(2)
        state = _seq_state(state + b * 4, 1)
        q += b * RS
        k += b * RS
        v += b * RS
        g += b * HV
        beta += b * HV
        out += b * HV * SV
    h = tl.program_id(0)
    hk = h % HK
    i = tl.arange(0, BK)
    j = tl.program_id(1) * BV + tl.arange(0, BV)
    im, jm = i < SK, j < SV
    sp = state + h.to(tl.int64) * SK * SV + i[:, None] * SV + j[None, :]
    sm = im[:, None] & jm[None, :]
    s = tl.load(sp, mask=sm, other=0.0)
    for t in range(T):
        kt = tl.load(k + (t * HK + hk) * SK + i, mask=im, other=0.0)
        qt = tl.load(q + (t * HK + hk) * SK + i, mask=im, other=0.0)
        vt = tl.load(v + (t * HV + h) * SV + j, mask=jm, other=0.0)
        gt = tl.load(g + t * HV + h)
        bt = tl.load(beta + t * HV + h)
        if RAW:
            inv_n = 1.0 / SK
            rs = 1.0 / tl.sqrt(SK * 1.0)
            kt = kt * (1.0 / tl.sqrt(tl.sum(kt * kt, axis=0) * inv_n + eps * inv_n)) * rs
            qt = qt * (1.0 / tl.sqrt(tl.sum(qt * qt, axis=0) * inv_n + eps * inv_n)) * rs
            x = gt + tl.load(dt_bias + h)
            gt = tl.where(x > 20.0, x, tl.log(1.0 + tl.exp(tl.minimum(x, 20.0)))) * tl.load(a_log + h)
            bt = 1.0 / (1.0 + tl.exp(-bt))
        s = s * tl.exp(gt)
        kv = tl.sum(s * kt[:, None], axis=0)  # s^T k: (BV,)
        d = (vt - kv) * bt
        s = s + kt[:, None] * d[None, :]
        o = tl.sum(s * qt[:, None], axis=0) * scale
        tl.store(out + (t * HV + h) * SV + j, o, mask=jm)
    tl.store(sp, s, mask=sm)


def _delta_step(q, k, v, g, beta, state: torch.Tensor, raw: tuple | None = None) -> torch.Tensor:
    """`delta_rule_kernel` on f32 contiguous inputs -> (T, Hv, Sv); raw = (dt_bias, a, eps): g and beta
    are the raw alpha and beta logit, q and k not yet normalized (the kernel's RAW form)."""
    T, Hv, Sv = v.shape
    Hk, Sk = q.shape[1], q.shape[2]
    q, k, v, g, beta = (a.float().contiguous() for a in (q, k, v, g, beta))
    out = torch.empty((T, Hv, Sv), dtype=torch.float32, device=v.device)
    bv = min(DELTA_BV, triton.next_power_of_2(Sv))
    bk = triton.next_power_of_2(Sk)
    dt_bias, a_log, eps = (g, g, 0.0) if raw is None else (raw[0].float().contiguous(),
                                                          raw[1].float().contiguous(), float(raw[2]))
    delta_rule_kernel[(Hv, triton.cdiv(Sv, bv))](q, k, v, g, beta, state, out, T, Hk, Hv, Sk, Sv,
                                                  1.0 / math.sqrt(Sv), dt_bias, a_log, eps, BK=bk, BV=bv,
                                                  RAW=raw is not None, num_warps=4 if bk * bv >= 2048 else 2)
    return out


def conv_delta_seqs(mixed, alpha, b, conv_w, dt_bias, a, table, heads: tuple[int, int, int],
                    eps: float) -> torch.Tensor:
    """B sequences of one token each (a batched decode step): `CudaOps.conv_delta_rule` of row b of mixed
    (B, 2 Hk S + Hv S), alpha and b (B, Hv) on sequence b's conv window and delta-rule state, whose addresses are
    row b of `table` (B, 4) int64 (columns 0 and 1; `CudaOps.kv_tables`); two launches for all of them,
    q, k and v read in place from the conv's output. -> (B, Hv, S)."""
    hk, hv, s = heads
    B, C = mixed.shape
    x, w = _rows_f32(mixed), conv_w.float().contiguous()
    conv = torch.empty((B, C), dtype=torch.float32, device=x.device)
    conv1d_kernel[(triton.cdiv(C, CONV_BC), B)](x, table, w, conv, 1, C, x.stride(0), K=w.shape[1], BC=CONV_BC,
                                                SILU=True, TABLE=True, num_warps=2)
    out = torch.empty((B, hv, s), dtype=torch.float32, device=x.device)
    bv = min(DELTA_SEQS[0], triton.next_power_of_2(s))
    bk = triton.next_power_of_2(s)
    delta_rule_kernel[(hv, triton.cdiv(s, bv), B)](
        conv, conv[:, hk * s:], conv[:, 2 * hk * s:], alpha.float().contiguous(), b.float().contiguous(), table, out,
        1, hk, hv, s, s, 1.0 / math.sqrt(s), dt_bias.float().contiguous(), a.float().contiguous(), float(eps), BK=bk,
        BV=bv, RAW=True, TABLE=True, RS=C, num_warps=DELTA_SEQS[1])
    return out


def delta_net_step(q, k, v, alpha, b, dt_bias, a, state: torch.Tensor, eps: float) -> torch.Tensor:
    """A step from the raw projections (`BaseOps.delta_net_step`) in one `delta_rule_kernel` launch;
    the state must be f32 and contiguous -> (T, Hv, Sv)."""
    return _delta_step(q, k, v, alpha.reshape(v.shape[0], v.shape[1]), b.reshape(v.shape[0], v.shape[1]), state,
                       raw=(dt_bias.reshape(-1), a.reshape(-1), eps))


@triton.jit
def gated_norm_kernel(x, w, z, out, N, eps, H, sz, xq, xd, xs, BN: tl.constexpr, QUANT: tl.constexpr,
                      NBQ: tl.constexpr, HALF: tl.constexpr = False):
    """Row r of x (R, N): out = x / sqrt(mean(x^2) + eps) * w * silu(z), z's row r at (r // H) * sz + (r % H) * N
    (sz: z's token stride); grid (R,). With QUANT
    (N = NBQ * 32) the row is also written on 8 bits: blocks h * NBQ ... of the (R / H, H * N) activation
    row r // H, h = r % H (`mmvq.q8_store`), for the output projection's matvec; with HALF in f16 to xq (R, N), for
    its tile GEMM."""
    r = tl.program_id(0).to(tl.int64)
    n = tl.arange(0, BN)
    m = n < N
    xr = tl.load(x + r * N + n, mask=m, other=0.0)
    zr = tl.load(z + (r // H) * sz + (r % H) * N + n, mask=m, other=0.0)
    wr = tl.load(w + n, mask=m, other=0.0)
    y = xr * (1.0 / tl.sqrt(tl.sum(xr * xr, axis=0) / N + eps)) * wr
    y = y * (zr / (1.0 + tl.exp(-zr)))
    tl.store(out + r * N + n, y, mask=m)
    if HALF:
        tl.store(xq + r * N + n, y.to(tl.float16), mask=m)
    if QUANT:
        b = (r % H) * NBQ + tl.arange(0, NBQ)
        q8_store(tl.reshape(y, (NBQ, 2, 4, 4)), b, r // H, H * N, b >= 0, xq, xd, xs)


def rms_norm_gated(x: torch.Tensor, w: torch.Tensor, eps: float, z: torch.Tensor, q8=None,
                   out16: torch.Tensor | None = None) -> torch.Tensor:
    """rms_norm(x, w, eps) * silu(z) over the last axis (x, z of one shape (T, H, N), w (N,)) in one
    launch; q8: `mmvq.q8_buffers(T, H * N)` to also get the output on 8 bits (N a power of two >= 32); out16: an f16
    (T, H * N) buffer the output is also stored to."""
    N = x.shape[-1]
    x, w = x.float().contiguous(), w.float().contiguous()
    H = x.shape[-2] if x.dim() >= 2 else 1
    # (T, H, N) heads of a column slice are read in place
    z = _rows_f32(z) if x.dim() == 3 and z.shape == x.shape else z.float().contiguous().reshape(x.shape)
    sz = z.stride(0) if z.dim() == 3 else H * N
    out = torch.empty_like(x)
    bn = triton.next_power_of_2(N)
    xq, xd, xs = q8 if q8 is not None else (out16 if out16 is not None else out, out, out)
    gated_norm_kernel[(x.numel() // N,)](x, w, z, out, N, float(eps), H, sz, xq, xd, xs, BN=bn, QUANT=q8 is not None,
                                         NBQ=max(1, N // 32), HALF=q8 is None and out16 is not None,
                                         num_warps=4 if bn >= 1024 else 1)
    return out


def delta_net_recurrent(q, k, v, g, beta, state: torch.Tensor) -> torch.Tensor:
    """The delta rule token by token; state (Hv, S, S) [head, key dim, value dim], in place -> (T, Hv, S)."""
    T, Hv, Sv = v.shape
    if state.is_contiguous() and state.dtype == torch.float32:
        return _delta_step(q, k, v, g, beta, state)
    q, k = _tiled(q.float(), Hv), _tiled(k.float(), Hv)
    v, beta = v.float(), beta.float()
    decay = torch.exp(g.float())
    scale = 1.0 / math.sqrt(Sv)
    s = state
    outs = []
    for t in range(T):
        s = s * decay[t][:, None, None]
        kv = torch.matmul(k[t][:, None, :], s)[:, 0]  # S^T k: (Hv, Sv)
        d = (v[t] - kv) * beta[t][:, None]
        s = s + k[t][:, :, None] * d[:, None, :]
        outs.append(torch.matmul(q[t][:, None, :], s)[:, 0] * scale)
    state.copy_(s)
    return torch.stack(outs, dim=0)


@triton.jit
def chunk_prep_kernel(q, k, v, g, beta, dt_bias, a_log, QN, A, RHS, M, KE, GM, T, HK, HV, S, SV, sq, sk, sv, sg, sb,
                      eps, C: tl.constexpr, SP: tl.constexpr, SVP: tl.constexpr, RAW: tl.constexpr,
                      PREC: tl.constexpr = "tf32x3"):
    """Everything of chunk j of value head h the chunked delta rule needs before its chunk-to-chunk pass, in one
    program (grid (Hv, n)): from q, k (T, HK, S) (token strides sq, sk; v-head h reads k-head h % HK), v (T, HV, SV)
    (stride sv), g, beta (T, HV) (token strides sg, sb): G = the within-chunk cumulated g, decay D[t, s] =
    exp(G_t - G_s) (s <= t), and into (Hv, n, C, ...) buffers: QN = q, A = strict lower part of (K K^T * D) times
    beta of the row, RHS = [beta v | beta exp(G) k], M = lower part of (Q K^T * D), KE = k exp(G_last - G),
    GM = exp(G). Tokens past T are zeros (g = beta = 0). RAW: q, k not yet L2-normalized, g holds alpha and beta
    its logit (the gates as `delta_rule_kernel`'s RAW form computes them)."""
    h = tl.program_id(0)
    j = tl.program_id(1)
    b = h.to(tl.int64) * tl.num_programs(1) + j
    hk = h % HK
    i = tl.arange(0, C)
    t = j * C + i
    tm = t < T
    e = tl.arange(0, SP)
    em = e < S
    mk = tm[:, None] & em[None, :]
    qt = tl.load(q + t[:, None].to(tl.int64) * sq + hk * S + e[None, :], mask=mk, other=0.0)
    kt = tl.load(k + t[:, None].to(tl.int64) * sk + hk * S + e[None, :], mask=mk, other=0.0)
    gt = tl.load(g + t * sg + h, mask=tm, other=0.0)
    bt = tl.load(beta + t * sb + h, mask=tm, other=0.0)
    if RAW:
        inv_n = 1.0 / S
        rs = 1.0 / tl.sqrt(S * 1.0)
        kt = kt * (1.0 / tl.sqrt(tl.sum(kt * kt, axis=1) * inv_n + eps * inv_n) * rs)[:, None]
        qt = qt * (1.0 / tl.sqrt(tl.sum(qt * qt, axis=1) * inv_n + eps * inv_n) * rs)[:, None]
        x = gt + tl.load(dt_bias + h)
        gt = tl.where(tm, tl.where(x > 20.0, x, tl.log(1.0 + tl.exp(tl.minimum(x, 20.0)))) * tl.load(a_log + h), 0.0)
        bt = tl.where(tm, 1.0 / (1.0 + tl.exp(-bt)), 0.0)
    G = tl.cumsum(gt, 0)
    gl = tl.sum(tl.where(i == C - 1, G, 0.0), 0)
    lower = i[:, None] >= i[None, :]
    decay = tl.where(lower, tl.exp(tl.where(lower, G[:, None] - G[None, :], 0.0)), 0.0)
    kkt = tl.dot(kt, tl.trans(kt), input_precision=PREC)
    qkt = tl.dot(qt, tl.trans(kt), input_precision=PREC)
    cc = b * C * C + i[:, None] * C + i[None, :]
    tl.store(A + cc, tl.where(i[:, None] > i[None, :], kkt * decay, 0.0) * bt[:, None])
    tl.store(M + cc, qkt * decay)
    cs = b * C * S + i[:, None] * S + e[None, :]
    tl.store(QN + cs, qt, mask=em[None, :])
    tl.store(KE + cs, kt * tl.exp(gl - G)[:, None], mask=em[None, :])
    gam = tl.exp(G)
    tl.store(GM + b * C + i, gam)
    w = SV + S
    tl.store(RHS + b * C * w + i[:, None] * w + SV + e[None, :], kt * (bt * gam)[:, None], mask=em[None, :])
    f = tl.arange(0, SVP)
    fm = f < SV
    vt = tl.load(v + t[:, None].to(tl.int64) * sv + h * SV + f[None, :], mask=tm[:, None] & fm[None, :], other=0.0)
    tl.store(RHS + b * C * w + i[:, None] * w + f[None, :], vt * bt[:, None], mask=fm[None, :])


def delta_net_chunked(q, k, v, g, beta, state: torch.Tensor, chunk: int = 64, raw: tuple | None = None) -> torch.Tensor:
    """The delta rule chunk by chunk (cpu/deltanet.py's docstring); same result as the recurrence. Three launches:
    `chunk_prep_kernel` (every chunk's products and decays), a triangular solve of every chunk's unit lower system
    (I + A) [U W] = RHS, `chunk_state_kernel` (the state from chunk to chunk, the output). raw = (dt_bias, a, eps):
    q, k are not yet normalized and g, beta are the raw alpha and beta logit (`BaseOps.delta_net_step`)."""
    T, Hv, Sv = v.shape
    S, Hk = k.shape[-1], k.shape[1]
    c = max(16, triton.next_power_of_2(min(int(chunk), T)))
    n = -(-T // c)
    q, k, v, g, beta = (_rows_f32(x) for x in (q, k, v, g.reshape(T, Hv), beta.reshape(T, Hv)))
    dt_bias, a_log, eps = ((raw[0].reshape(-1).float().contiguous(), raw[1].reshape(-1).float().contiguous(),
                            float(raw[2])) if raw is not None else (g, g, 0.0))
    dev = v.device
    f32 = torch.float32
    QN, KE = (torch.empty((Hv, n, c, S), dtype=f32, device=dev) for _ in range(2))
    A, M = (torch.empty((Hv, n, c, c), dtype=f32, device=dev) for _ in range(2))
    RHS = torch.empty((Hv, n, c, Sv + S), dtype=f32, device=dev)
    GM = torch.empty((Hv, n, c), dtype=f32, device=dev)
    sp, svp = max(16, triton.next_power_of_2(S)), max(16, triton.next_power_of_2(Sv))
    prec = "tf32x3" if v.is_cuda else "ieee"
    chunk_prep_kernel[(Hv, n)](q, k, v, g, beta, dt_bias, a_log, QN, A, RHS, M, KE, GM, T, Hk, Hv, S, Sv, q.stride(0),
                               k.stride(0), v.stride(0), g.stride(0), beta.stride(0), eps, C=c, SP=sp, SVP=svp,
                               RAW=raw is not None, PREC=prec, num_warps=8)
    UW = torch.linalg.solve_triangular(A, RHS, upper=False, unitriangular=True)  # A's diagonal is not read
    s = state if state.dtype == f32 and state.is_contiguous() else state.float().contiguous()
    out = torch.empty((T, Hv, Sv), dtype=f32, device=dev)
    bv = min(CHUNK_BV, svp)
    chunk_state_kernel[(Hv, triton.cdiv(Sv, bv))](
        UW, QN, M, KE, GM, s, out, n, c, S, Sv, T, Hv, *UW.stride(), 1.0 / math.sqrt(Sv), CP=c, SP=sp, BV=bv,
        ST=min(32, sp), PREC=prec, num_warps=4, num_stages=2)
    if s is not state:
        state.copy_(s)
    return out


@triton.jit
def chunk_state_kernel(U, Q, M, KE, GM, s, out, n, C, S, SV, T, HV, suh, suj, sur, suc, scale, CP: tl.constexpr,
                       SP: tl.constexpr, BV: tl.constexpr, ST: tl.constexpr, PREC: tl.constexpr = "tf32x3"):
    """The chunked delta rule's pass from chunk to chunk (`delta_net_chunked`) in one launch: program (h, vb) holds
    columns vb * BV ... of head h's state (S, SV) in registers, as SP / ST slices of ST key rows, and for each of
    the n chunks of C tokens computes d = U_j - W_j s, the chunk's output (gamma_j * (Q_j s) + M_j d) * scale and the
    next state gamma_j[-1] * s + k_end_j^T d (the columns of the state are independent). U: the solve's [U W] (W
    from column SV), (HV, n, C, SV + S) at strides suh, suj, sur, suc (torch's solve returns column-major chunks);
    out (T, HV, SV), tokens j * C + i < T. Products of f32 values to f32 accuracy on tensor cores (tf32x3; PREC
    "ieee" for the interpreter's exact ones)."""
    h = tl.program_id(0)
    vb = tl.program_id(1) * BV + tl.arange(0, BV)
    vm = vb < SV
    i = tl.arange(0, CP)
    im = i < C
    kr = tl.arange(0, ST)
    hs = h.to(tl.int64) * S * SV
    st = ()
    for t in tl.static_range(SP // ST):
        kd = t * ST + kr
        st = st + (tl.load(s + hs + kd[:, None] * SV + vb[None, :], mask=(kd < S)[:, None] & vm[None, :],
                           other=0.0),)
    for j in range(0, n):
        b = h.to(tl.int64) * n + j
        mv = im[:, None] & vm[None, :]
        ub = h.to(tl.int64) * suh + j * suj
        d = tl.load(U + ub + i[:, None] * sur + vb[None, :] * suc, mask=mv, other=0.0)
        qs = tl.zeros([CP, BV], tl.float32)
        for t in tl.static_range(SP // ST):
            kd = t * ST + kr
            ck = b * C * S + i[:, None] * S + kd[None, :]
            mk = im[:, None] & (kd < S)[None, :]
            cw = ub + i[:, None] * sur + (SV + kd[None, :]) * suc
            d -= tl.dot(tl.load(U + cw, mask=mk, other=0.0), st[t], input_precision=PREC)
            qs += tl.dot(tl.load(Q + ck, mask=mk, other=0.0), st[t], input_precision=PREC)
        gm = tl.load(GM + b * C + i, mask=im, other=0.0)
        mj = tl.load(M + b * C * C + i[:, None] * C + i[None, :], mask=im[:, None] & im[None, :], other=0.0)
        o = (gm[:, None] * qs + tl.dot(mj, d, input_precision=PREC)) * scale
        tok = j * C + i
        tl.store(out + (tok[:, None].to(tl.int64) * HV + h) * SV + vb[None, :], o, mask=mv & (tok < T)[:, None])
        glast = tl.load(GM + b * C + C - 1)
        new = ()
        for t in tl.static_range(SP // ST):
            kd = t * ST + kr
            ke = tl.load(KE + b * C * S + kd[:, None] + i[None, :] * S, mask=(kd < S)[:, None] & im[None, :], other=0.0)
            new = new + (glast * st[t] + tl.dot(ke, d, input_precision=PREC),)
        st = new
    for t in tl.static_range(SP // ST):
        kd = t * ST + kr
        tl.store(s + hs + kd[:, None] * SV + vb[None, :], st[t], mask=(kd < S)[:, None] & vm[None, :])
