"""Sampling on the device: a step's token drawn from its logits by the sampler's own rules (`engine.sampler`),
so that a captured step can feed the next one without the host (`StepGraphs.sample`).

Each row's logits become 64-bit keys that order the row as the host's sampler does: by value, descending, ties by
the lower token id (`sample_keys_kernel`: the value's bits made order-preserving in the high half, -0 as +0 and NaN
above +inf, the id's complement in the low half). `torch.topk` keeps the best `top` keys (`sampler.TOP_LOGITS`). The
best `top_k` of them are exactly the row's top-k for any top_k <= top, so the chain below needs no other token.

`sample_rows_kernel`, a program a row, then runs the chain of `Sampler.sample` in float64 on those, in order: top-k,
top-p (the shortest prefix whose softmax reaches p, at least `need` = max(min_keep, 1)), min-p (logit >= best +
log(min_p), at least `need`), temperature, softmax and the draw: the first candidate whose running probability
reaches u times their sum, u the step's uniform draw from the request's generator (`Sampler.draw_ahead`).
Temperature <= 0 takes the first key (greedy: the best logit, its lowest id). A row whose best logit is NaN or
+inf, or which has no finite logit, gets the id -1 (the host raises for it) and feeds token 0 to the next step.

A row with top-k off (top_k <= 0; top-p off, min-p with at most one token kept by force: `Sampler.device_row`), an
OpenAI client's default, draws from the whole row in token id order, as the host does: `full_max_kernel` (each
block's max), `full_sum_kernel` (each block's sum of exp(x / T - max / T) over the finite logits at or above
max + log(min_p)) and `full_pick_kernel` (the block where the running sum reaches u times the total, then the token
in it) give its id, which `sample_rows_kernel` takes for such rows (FULL).

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
FULL_BLOCK = 4096  # logits a program of the whole-row passes


@triton.jit
def sample_keys_kernel(x, keys, V, BLOCK: tl.constexpr):
    """keys[r, i] of logits x (rows, V) f32: the value's order-preserving bits << 32 | (2**32 - 1 - i)."""
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
def full_max_kernel(x, V, bmax, NB, BLOCK: tl.constexpr):
    """bmax[r, b]: the max of block b of row r of logits x (rows, V) f32 (NaN ignored)."""
    r = tl.program_id(0).to(tl.int64)
    b = tl.program_id(1)
    o = b * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + r * V + o, mask=o < V, other=float("-inf"))
    tl.store(bmax + r * NB + b, tl.max(tl.where(v == v, v, float("-inf")), 0))


@triton.jit
def _full_terms(x, r, o, V, bmax, fp, NB, NBP: tl.constexpr):
    """exp(x / T - max / T) in f64 of row r's logits at o that are candidates (finite, at or above max +
    log(min_p)), else 0; and which are."""
    j = tl.arange(0, NBP)
    m = tl.max(tl.load(bmax + r * NB + j, mask=j < NB, other=float("-inf")), 0).to(tl.float64)
    t = tl.load(fp + r * 3)
    t = tl.where(t > 0.0, t, 1.0)
    min_p = tl.load(fp + r * 3 + 2)
    floor = tl.where(min_p > 0.0, m + tl.log(tl.maximum(min_p, 1e-300)), float("-inf"))
    v = tl.load(x + r * V + o, mask=o < V, other=float("-inf")).to(tl.float64)
    keep = (v >= floor) & (v > float("-inf")) & (v == v) & (o < V)
    return tl.where(keep, tl.exp(v / t - m / t), 0.0), keep


@triton.jit
def full_sum_kernel(x, V, bmax, bsum, fp, NB, BLOCK: tl.constexpr, NBP: tl.constexpr):
    """bsum[r, b]: the sum of block b's `_full_terms`."""
    r = tl.program_id(0).to(tl.int64)
    b = tl.program_id(1)
    e, _ = _full_terms(x, r, b * BLOCK + tl.arange(0, BLOCK), V, bmax, fp, NB, NBP)
    tl.store(bsum + r * NB + b, tl.sum(e, 0))


@triton.jit
def full_pick_kernel(x, V, bmax, bsum, fp, u, count, B, full_tok, NB, BLOCK: tl.constexpr, NBP: tl.constexpr):
    """full_tok[r]: the first candidate whose running sum (in id order) reaches u times the row's total (else the
    last candidate), u = u[count, r]."""
    r = tl.program_id(0).to(tl.int64)
    j = tl.arange(0, NBP)
    s = tl.load(bsum + r * NB + j, mask=j < NB, other=0.0)
    run = tl.cumsum(s, 0)
    target = tl.load(u + tl.load(count) * B + r) * tl.sum(s, 0)
    hit = (run >= target) & (s > 0.0)
    last = tl.max(tl.where(s > 0.0, j, 0), 0)
    blk = tl.where(tl.sum(hit.to(tl.int32), 0) > 0, tl.min(tl.where(hit, j, NBP), 0), last)
    before = tl.sum(tl.where(j < blk, s, 0.0), 0)
    o = blk * BLOCK + tl.arange(0, BLOCK)
    e, keep = _full_terms(x, r, o, V, bmax, fp, NB, NBP)
    run = before + tl.cumsum(e, 0)
    found = keep & (run >= target)
    pick = tl.where(tl.sum(found.to(tl.int32), 0) > 0, tl.min(tl.where(found, o, V), 0),
                    tl.max(tl.where(keep, o, -1), 0))
    tl.store(full_tok + r, pick.to(tl.int32))


@triton.jit
def sample_rows_kernel(keys, k, fp, ip, u, count, tokens, pos, chosen, B, full_tok, K: tl.constexpr,
                       FULL: tl.constexpr):
    """Row r's token from its best k keys (descending); fp (B, 3) f64: temperature, top-p, min-p; ip (B, 2) i32:
    top-k (<= 0: the whole row's draw, full_tok[r], with FULL), need; u (steps, B) f64 indexed by count."""
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
    if FULL:
        tok = tl.where((top_k <= 0) & (temp > 0.0), tl.load(full_tok + r), tok)
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


def full_draws(logits: torch.Tensor, fp: torch.Tensor, u: torch.Tensor, count: torch.Tensor,
               block: int = 0) -> torch.Tensor:
    """Each row's draw from the whole row in id order (rows with top-k off: see the module docstring), (rows,)
    int32; the other rows' values are not used."""
    rows, v = logits.shape
    block = block or FULL_BLOCK
    nb = triton.cdiv(v, block)
    nbp = max(16, triton.next_power_of_2(nb))
    bmax = torch.empty((rows, nb), dtype=torch.float32, device=logits.device)
    bsum = torch.empty((rows, nb), dtype=torch.float64, device=logits.device)
    tok = torch.empty((rows,), dtype=torch.int32, device=logits.device)
    full_max_kernel[(rows, nb)](logits, v, bmax, nb, BLOCK=block, num_warps=4)
    full_sum_kernel[(rows, nb)](logits, v, bmax, bsum, fp, nb, BLOCK=block, NBP=nbp, num_warps=4)
    full_pick_kernel[(rows,)](logits, v, bmax, bsum, fp, u, count, rows, tok, nb, BLOCK=block, NBP=nbp, num_warps=4)
    return tok


def sample_next(logits: torch.Tensor, top: int, fp: torch.Tensor, ip: torch.Tensor, u: torch.Tensor,
                tokens: torch.Tensor, pos: torch.Tensor, chosen: torch.Tensor, count: torch.Tensor,
                full: bool = False, block: int = 0) -> None:
    """The end of a sampled step (see the module docstring) for logits (B, V): row r's token into tokens[r] (and
    chosen[count, r]: -1 where its logits are not finite), pos[r] + 1, count + 1. fp, ip: `rows_params`; u: the
    steps' uniforms (steps, B) f64; tokens, pos, chosen int32; count (1,) int64. `full`: some rows draw from the
    whole row (top-k off); block: those passes' block (tests)."""
    logits = logits.reshape(-1, logits.shape[-1]).float().contiguous()
    keys = best_keys(logits, top)
    b, k = keys.shape
    whole = full_draws(logits, fp, u, count, block) if full else tokens
    sample_rows_kernel[(b,)](keys, k, fp, ip, u, count, tokens, pos, chosen, b, whole,
                             K=max(16, triton.next_power_of_2(k)), FULL=full, num_warps=4)
    count.add_(1)


def needs_full(params) -> bool:
    """Whether any of these rows' settings (`rows_params`' input) draws from the whole row."""
    a = np.asarray(params, dtype=np.float64).reshape(-1, 5)
    return bool(np.any((a[:, 1] <= 0) & (a[:, 0] > 0)))


def rows_params(rows, device) -> tuple[torch.Tensor, torch.Tensor]:
    """Each row's (temperature, top_k, top_p, min_p, need) as the kernel's two arrays on `device`."""
    a = np.asarray(rows, dtype=np.float64).reshape(-1, 5)
    fp = torch.from_numpy(np.ascontiguousarray(a[:, [0, 2, 3]])).to(device)
    ip = torch.from_numpy(np.ascontiguousarray(a[:, [1, 4]].astype(np.int32))).to(device)
    return fp, ip
