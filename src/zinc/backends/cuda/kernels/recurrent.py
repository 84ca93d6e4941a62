"""Recurrent-layer ops of the CUDA backend in torch: causal conv1d and the gated delta rule.

Same functions as the NumPy backend's `zinc.backends.cpu.deltanet` (read its docstring for the
math), written as device torch ops with no host sync, so a single-token step can be captured in a
CUDA graph. States (the conv window and the (Hv, S, S) delta-rule matrices) are updated in place.
The chunked form solves the unit lower-triangular system of each chunk with a triangular solve.
"""

from __future__ import annotations

import math

import torch


def conv1d_causal(x: torch.Tensor, state: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Depthwise causal conv of x (T, C) over [state (K-1, C), x]; state keeps the last K-1 inputs."""
    T, K = x.shape[0], w.shape[1]
    win = torch.cat([state, x.float()], dim=0)  # (T + K - 1, C), oldest first
    y = win[0:T] * w[:, 0]
    for j in range(1, K):  # f32 sum over the taps in order
        y = y + win[j:j + T] * w[:, j]
    state.copy_(win[T:])
    return y


def _tiled(x: torch.Tensor, n_v: int) -> torch.Tensor:
    """q or k heads (T, Hk, S) repeated for Hv value heads: v-head h reads k-head h % Hk."""
    n_k = x.shape[1]
    return x if n_k == n_v else x.repeat(1, n_v // n_k, 1)


def delta_net_recurrent(q, k, v, g, beta, state: torch.Tensor) -> torch.Tensor:
    """The delta rule token by token; state (Hv, S, S) [head, key dim, value dim], in place -> (T, Hv, S)."""
    T, Hv, Sv = v.shape
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


def _blocks(x: torch.Tensor, n: int, c: int) -> torch.Tensor:
    """(T, H, ...) zero-padded to n*c tokens -> (H, n, c, ...)."""
    pad = n * c - x.shape[0]
    if pad:
        x = torch.cat([x, x.new_zeros((pad, *x.shape[1:]))], dim=0)
    return torch.movedim(x.reshape(n, c, *x.shape[1:]), 2, 0)


def delta_net_chunked(q, k, v, g, beta, state: torch.Tensor, chunk: int = 64) -> torch.Tensor:
    """The delta rule chunk by chunk (cpu/deltanet.py's docstring); same result as the recurrence."""
    T, Hv, Sv = v.shape
    c = max(1, min(int(chunk), T))
    n = -(-T // c)
    Q, K, V = (_blocks(x.float(), n, c) for x in (_tiled(q, Hv), _tiled(k, Hv), v))  # (Hv, n, c, S)
    G = torch.cumsum(_blocks(g.float(), n, c), dim=-1)  # (Hv, n, c); padding: g = 0, beta = 0
    B = _blocks(beta.float(), n, c)
    causal = torch.tril(torch.ones((c, c), dtype=torch.bool, device=v.device))
    diff = G[..., :, None] - G[..., None, :]  # G_t - G_s
    decay = torch.where(causal, torch.exp(torch.where(causal, diff, 0.0)), 0.0)  # (Hv, n, c, c), s <= t
    kt = K.transpose(-1, -2)
    a = torch.tril(torch.matmul(K, kt) * decay, -1) * B[..., :, None]
    eye = torch.eye(c, dtype=torch.float32, device=v.device)
    gamma = torch.exp(G)
    rhs = torch.cat([B[..., None] * V, (B * gamma)[..., None] * K], dim=-1)
    UW = torch.linalg.solve_triangular(a + eye, rhs, upper=False, unitriangular=True)
    U, W = UW[..., :Sv], UW[..., Sv:]  # (Hv, n, c, S)
    M = torch.matmul(Q, kt) * decay  # (Hv, n, c, c)
    k_end = K * torch.exp(G[..., -1:] - G)[..., None]
    scale = 1.0 / math.sqrt(Sv)
    s = state.float()
    outs = []
    for j in range(n):
        d = U[:, j] - torch.matmul(W[:, j], s)  # (Hv, c, S)
        outs.append((gamma[:, j, :, None] * torch.matmul(Q[:, j], s) + torch.matmul(M[:, j], d)) * scale)
        s = gamma[:, j, -1, None, None] * s + torch.matmul(k_end[:, j].transpose(-1, -2), d)
    state.copy_(s)
    out = torch.stack(outs, dim=1)  # (Hv, n, c, S)
    return out.reshape(Hv, n * c, Sv).transpose(0, 1)[:T].contiguous()
