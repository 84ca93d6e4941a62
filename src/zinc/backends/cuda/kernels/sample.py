"""Sampling on the device: a step's token drawn from its logits by the sampler's own rules (`engine.sampler`),
so that a captured step can feed the next one without the host (`StepGraphs.sample`).

Each row's logits become 64-bit keys that order the row as the host's sampler does: by value, descending, ties by
the lower token id (`sample_keys_kernel`: the value's bits made order-preserving in the high half, -0 as +0 and NaN
above +inf, the id's complement in the low half). `torch.topk` keeps the best `TOP` keys (`sampler.TOP_LOGITS`). The
best `top_k` of them are exactly the row's top-k for any top_k <= TOP, so the chain below needs no other token.

`sample_rows_kernel`, a program a row, then runs the chain of `Sampler.sample` in float64 on those, in order: top-k,
top-p (the shortest prefix whose softmax reaches p, at least `need` = max(min_keep, 1)), min-p (logit >= best +
log(min_p), at least `need`), temperature, softmax and the draw: the first candidate whose running probability
reaches u times their sum, u the step's uniform draw from the request's generator (`Sampler.draw_ahead`).
Temperature <= 0 takes the first key (greedy: the best logit, its lowest id). A row whose best logit is NaN or
+inf, or which has no finite logit, gets the id -1 (the host raises for it) and feeds token 0 to the next step.

The token goes where the greedy loop's does: the next step's input, position + 1, appended to `chosen` at row
`count`. The sums run in another order than NumPy's, so a draw within ~1e-15 of a boundary between two candidates
can differ from the host's; no other difference.
"""

from __future__ import annotations

import numpy as np
import torch
import triton
import triton.language as tl

KEYS_BLOCK = 1024
LOW = 0xFFFFFFFF  # a key's low half: LOW - token id


@triton.jit
def sample_keys_kernel(x, keys, V, BLOCK: tl.constexpr):
    """keys[r, i] of logits x (rows, V) f32: the value's order-preserving bits << 32 | (LOW - i)."""
    r = tl.program_id(0).to(tl.int64)
    o = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = o < V
    v = tl.load(x + r * V + o, mask=m, other=0.0)
    v = tl.where(v == 0.0, 0.0, v)  # -0 as +0: equal values tie, broken by id
    b = v.to(tl.int32, bitcast=True)
    s = b ^ ((b >> 31) & 0x7FFFFFFF)  # negative values: magnitude bits flipped (signed order = float order)
    s = tl.where(v != v, 0x7FFFFFFF, s)  # NaN above everything: the row is refused
    key = (s.to(tl.int64) << 32) + (4294967295 - o.to(tl.int64))
    tl.store(keys + r * V + o, key, mask=m)


@triton.jit
def sample_rows_kernel(keys, k, fp, ip, u, count, tokens, pos, chosen, B, K: tl.constexpr):
    """Row r's token from its best k keys (descending); fp (B, 3) f64: temperature, top-p, min-p; ip (B, 2) i32:
    top-k, need; u (steps, B) f64 indexed by count."""
    r = tl.program_id(0)
    j = tl.arange(0, K)
    key = tl.load(keys + r * k + j, mask=j < k, other=0)
    s = (key >> 32).to(tl.int32)
    ids = (4294967295 - (key & 4294967295)).to(tl.int32)
    b = s ^ ((s >> 31) & 0x7FFFFFFF)
    v = tl.where(j < k, b.to(tl.float32, bitcast=True).to(tl.float64), float("-inf"))
    v0 = tl.sum(tl.where(j == 0, v, 0.0), 0)  # the best (NaN sorts first)
    ok = (v0 == v0) & (v0 < float("inf")) & (v0 > float("-inf"))
    temp = tl.load(fp + r * 3)
    top_p = tl.load(fp + r * 3 + 1)
    min_p = tl.load(fp + r * 3 + 2)
    top_k = tl.load(ip + r * 2)
    need = tl.load(ip + r * 2 + 1)
    c = tl.load(count)
    n = tl.minimum(top_k, tl.sum((v > float("-inf")).to(tl.int32), 0))
    # top-p: over the n, the softmax's running sum; keep up to the first place it reaches p (and need)
    log_z = v0 + tl.log(tl.sum(tl.where(j < n, tl.exp(v - v0), 0.0), 0))
    run = tl.cumsum(tl.where(j < n, tl.exp(v - log_z), 0.0), 0)
    n_p = tl.min(tl.where((run >= top_p) & (j + 1 >= need) & (j < n), j + 1, n), 0)
    n = tl.where(top_p < 1.0, n_p, n)
    # min-p: the prefix at or above best + log(min_p), or the best `need`
    above = tl.sum(((v >= v0 + tl.log(tl.maximum(min_p, 1e-300))) & (j < n)).to(tl.int32), 0)
    n_m = tl.where(above >= need, above, tl.minimum(need, n))
    n = tl.where(min_p > 0.0, n_m, n)
    # temperature, softmax, the draw
    greedy = temp <= 0.0
    t = tl.where(greedy, 1.0, temp)
    e = tl.where(j < n, tl.exp(v / t - v0 / t), 0.0)
    probs = e / tl.sum(e, 0)
    run = tl.cumsum(probs, 0)
    target = tl.load(u + c * B + r) * tl.sum(probs, 0)
    idx = tl.min(tl.where((run >= target) & (j < n), j, n - 1), 0)
    idx = tl.where(greedy, 0, idx)
    tok = tl.sum(tl.where(j == idx, ids, 0), 0)
    tok = tl.where(ok, tok, -1)
    tl.store(chosen + c * B + r, tok)
    tl.store(tokens + r, tl.where(ok, tok, 0))
    tl.store(pos + r, tl.load(pos + r) + 1)


def best_keys(logits: torch.Tensor, top: int) -> torch.Tensor:
    """The best `top` keys of each row of logits (rows, V) f32, descending (rows, min(top, V)) int64."""
    rows, v = logits.shape
    keys = torch.empty((rows, v), dtype=torch.int64, device=logits.device)
    sample_keys_kernel[(rows, triton.cdiv(v, KEYS_BLOCK))](logits, keys, v, BLOCK=KEYS_BLOCK, num_warps=4)
    return torch.topk(keys, min(top, v), dim=1, sorted=True)[0]


def sample_next(logits: torch.Tensor, top: int, fp: torch.Tensor, ip: torch.Tensor, u: torch.Tensor,
                tokens: torch.Tensor, pos: torch.Tensor, chosen: torch.Tensor, count: torch.Tensor) -> None:
    """The end of a sampled step (see the module docstring) for logits (B, V): row r's token into tokens[r] (and
    chosen[count, r]: -1 where its logits are not finite), pos[r] + 1, count + 1. fp, ip: `rows_params`; u: the
    steps' uniforms (steps, B) f64; tokens, pos, chosen int32; count (1,) int64."""
    logits = logits.reshape(-1, logits.shape[-1]).float().contiguous()
    keys = best_keys(logits, top)
    b, k = keys.shape
    sample_rows_kernel[(b,)](keys, k, fp, ip, u, count, tokens, pos, chosen, b,
                             K=max(16, triton.next_power_of_2(k)), num_warps=4)
    count.add_(1)


def rows_params(rows, device) -> tuple[torch.Tensor, torch.Tensor]:
    """Each row's (temperature, top_k, top_p, min_p, need) as the kernel's two arrays on `device`."""
    a = np.asarray(rows, dtype=np.float64).reshape(-1, 5)
    fp = torch.from_numpy(np.ascontiguousarray(a[:, [0, 2, 3]])).to(device)
    ip = torch.from_numpy(np.ascontiguousarray(a[:, [1, 4]].astype(np.int32))).to(device)
    return fp, ip
