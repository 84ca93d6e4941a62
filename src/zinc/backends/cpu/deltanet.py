"""Recurrent-layer kernels of the NumPy backend: causal conv1d with a rolling window and the gated delta rule.

The delta rule (spec arch-qwen35.md §3.2) keeps one `S x S` matrix per value head, indexed
`[head, key dim i, value dim j]`. Per token, with `g <= 0` the log decay and `beta` the write
strength:

    S = S * exp(g);   d = beta * (v - S^T k);   S = S + k d^T;   o = S^T q / sqrt(S_v)

`delta_net_recurrent` runs exactly that, token by token (what llama.cpp's fused CPU op does).
`delta_net_chunked` computes the same function a chunk of `C` tokens at a time: inside a chunk the
unknown updates `D = [d_1 .. d_C]` solve a unit lower-triangular system, so everything except one
small matrix product per chunk is a batched matmul over all chunks and heads at once. With
`G_t` the cumulative log decay inside the chunk, `Γ_t = exp(G_t)` and `S0` the state at its start:

    (I + diag(beta) A) D = diag(beta) (V - diag(Γ) K S0),   A[t, s] = exp(G_t - G_s) k_t.k_s  (s < t)
    o_t = (Γ_t q_t^T S0 + sum_{s <= t} exp(G_t - G_s) (q_t.k_s) d_s) / sqrt(S_v)
    S_C = Γ_C S0 + sum_s exp(G_C - G_s) k_s d_s^T

Every exponent is a difference `G_t - G_s <= 0`, so nothing overflows however long the chunk.
The inverse `T = (I + diag(beta) A)^{-1}` comes from forward substitution (stable for any keys),
so `D = T diag(beta) V - (T diag(beta Γ) K) S0` needs S0 only in one product per chunk.
"""

from __future__ import annotations

import numpy as np

F32 = np.float32


def conv1d_causal(x: np.ndarray, state: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Depthwise causal conv of x (T, C) over [state (K-1, C), x]; the state keeps the last K-1 inputs."""
    T, K = x.shape[0], w.shape[1]
    win = np.concatenate([state, x.astype(F32)], axis=0)  # (T + K - 1, C), oldest first
    y = win[0:T] * w[:, 0]
    for j in range(1, K):  # f32 sum over the taps in order (ggml_ssm_conv)
        y += win[j:j + T] * w[:, j]
    state[...] = win[T:]
    return y


def _tiled(x: np.ndarray, n_v: int) -> np.ndarray:
    """q or k heads (T, Hk, S) repeated for Hv value heads: v-head h reads k-head h % Hk."""
    n_k = x.shape[1]
    return x if n_k == n_v else x[:, np.arange(n_v) % n_k]


def delta_net_recurrent(q, k, v, g, beta, state) -> np.ndarray:
    """The delta rule token by token; state (Hv, S, S) is updated in place. Returns (T, Hv, S)."""
    T, Hv, Sv = v.shape
    q, k = _tiled(q, Hv), _tiled(k, Hv)
    scale = F32(1.0 / np.sqrt(F32(Sv)))
    s = state.astype(F32, copy=True)
    out = np.empty((T, Hv, Sv), F32)
    decay = np.exp(g.astype(F32))
    for t in range(T):
        s *= decay[t][:, None, None]
        kv = np.matmul(k[t][:, None, :], s)[:, 0]  # S^T k: (Hv, Sv)
        d = (v[t] - kv) * beta[t][:, None]
        s += k[t][:, :, None] * d[:, None, :]
        out[t] = np.matmul(q[t][:, None, :], s)[:, 0] * scale
    state[...] = s
    return out


def _blocks(x: np.ndarray, n: int, c: int) -> np.ndarray:
    """(T, H, ...) padded to n*c tokens -> (H, n, c, ...)."""
    pad = n * c - x.shape[0]
    x = np.concatenate([x, np.zeros((pad, *x.shape[1:]), x.dtype)]) if pad else x
    return np.moveaxis(x.reshape(n, c, *x.shape[1:]), 2, 0)


def _unit_lower_inverse(a: np.ndarray) -> np.ndarray:
    """(I + a)^{-1} for strictly lower-triangular a (..., C, C), by forward substitution on rows."""
    c = a.shape[-1]
    inv = np.broadcast_to(np.eye(c, dtype=F32), a.shape).copy()
    for t in range(1, c):  # row t: e_t - sum_{s<t} a[t, s] * row s
        inv[..., t, :t] = -np.matmul(a[..., t:t + 1, :t], inv[..., :t, :t])[..., 0, :]
    return inv


def delta_net_chunked(q, k, v, g, beta, state, chunk: int = 64) -> np.ndarray:
    """The delta rule chunk by chunk (module docstring); same result as `delta_net_recurrent`."""
    T, Hv, Sv = v.shape
    c = max(1, min(int(chunk), T))
    n = -(-T // c)
    Q, K, V = (_blocks(x.astype(F32), n, c) for x in (_tiled(q, Hv), _tiled(k, Hv), v))  # (Hv, n, c, S)
    G = np.cumsum(_blocks(g.astype(F32), n, c), axis=-1)  # (Hv, n, c); padding: g = 0, beta = 0
    B = _blocks(beta.astype(F32), n, c)
    causal = np.tril(np.ones((c, c), bool))
    diff = G[..., :, None] - G[..., None, :]  # G_t - G_s
    decay = np.where(causal, np.exp(np.where(causal, diff, F32(0))), F32(0))  # (Hv, n, c, c), s <= t
    kt = np.swapaxes(K, -1, -2)
    a = np.tril(np.matmul(K, kt) * decay, -1) * B[..., :, None]
    inv = _unit_lower_inverse(a)
    gamma = np.exp(G)
    U = np.matmul(inv, B[..., None] * V)  # (Hv, n, c, S)
    W = np.matmul(inv, (B * gamma)[..., None] * K)
    M = np.matmul(Q, kt) * decay  # (Hv, n, c, c)
    k_end = K * np.exp(G[..., -1:] - G)[..., None]
    scale = F32(1.0 / np.sqrt(F32(Sv)))
    s = state.astype(F32, copy=True)
    out = np.empty((Hv, n, c, Sv), F32)
    for j in range(n):
        d = U[:, j] - np.matmul(W[:, j], s)  # (Hv, c, S)
        out[:, j] = (gamma[:, j, :, None] * np.matmul(Q[:, j], s) + np.matmul(M[:, j], d)) * scale
        s = gamma[:, j, -1, None, None] * s + np.matmul(np.swapaxes(k_end[:, j], -1, -2), d)
    state[...] = s
    return np.ascontiguousarray(out.reshape(Hv, n * c, Sv).transpose(1, 0, 2)[:T])
