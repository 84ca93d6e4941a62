"""BPE merge loops, all computing llama.cpp's result: repeatedly merge the adjacent pair with the
lowest merge rank, the leftmost one on ties, until no adjacent pair has a rank.

* `merge_str`: on strings with the "left right" -> rank dict (any merge list);
* `merge_ids_linear` / `merge_ids_heap`: on token ids with a `PairTable` (every merge side and
  result is a token, the usual case); linear for short words, a heap for long ones;
* `merge_batch`: many short words at once with NumPy (one merge per word per step), which keeps
  the Python overhead per word small when a text brings many new words.

The linear loops keep a list of the current pair values and take `min` / `index` (leftmost);
the heap loops pop (rank, left) and skip entries whose pair changed since they were queued,
exactly like llama.cpp's priority queue.
"""

from __future__ import annotations

import heapq
from itertools import chain

import numpy as np

INF = 1 << 62
HEAP_MIN = 96  # words at least this long use a heap


class Irregular(Exception):
    """A merge whose result is not a token: the word is redone with `merge_str`."""


def merge_ranks(merges: list[str]) -> dict[str, int]:
    """"left right" -> rank (the first occurrence wins, as llama.cpp's `emplace`). Symbols never
    contain " ", so a lookup key "left right" can only equal a line whose first space at
    index >= 1 separates exactly these two sides."""
    return dict(zip(reversed(merges), range(len(merges) - 1, -1, -1)))


class PairTable(dict):
    """Lazily filled `left * nv + right -> rank * nv + merged_id` (INF: no merge). The smallest
    value is the lowest rank and `value % nv` is the merged token."""

    def __init__(self, ranks: dict[str, int], tokens: list[str], t2i: dict[str, int], nv: int):
        super().__init__()
        self._ranks, self._tokens, self._t2i, self._nv = ranks, tokens, t2i, nv

    def __missing__(self, key: int) -> int:
        a, b = divmod(key, self._nv)
        ta, tb = self._tokens[a], self._tokens[b]
        r = self._ranks.get(ta + " " + tb)
        if r is None:
            val = INF
        else:
            c = self._t2i.get(ta + tb)
            if c is None:
                raise Irregular
            val = r * self._nv + c
        self[key] = val
        return val


def merge_linear(syms: list[str], value, sep: str = " ", none=INF) -> list[str]:
    """Merge adjacent symbols in place, lowest pair value first (leftmost on ties), until no pair has
    one: `value(left + sep + right, none)` looks a pair up (BPE: merge ranks by "a b"; SPM: negated
    token scores by "ab"). Quadratic: for short words."""
    pr = [value(syms[i] + sep + syms[i + 1], none) for i in range(len(syms) - 1)]
    while pr:
        r = min(pr)
        if r == none:
            break
        i = pr.index(r)
        syms[i] += syms[i + 1]
        del syms[i + 1]
        del pr[i]
        if i > 0:
            pr[i - 1] = value(syms[i - 1] + sep + syms[i], none)
        if i < len(pr):
            pr[i] = value(syms[i] + sep + syms[i + 1], none)
    return syms


def _merge_str_heap(syms: list[str], ranks: dict[str, int]) -> list[str]:
    n = len(syms)
    text = list(syms)
    nxt = list(range(1, n)) + [-1]
    prv = list(range(-1, n - 1))
    get = ranks.get
    heap = [(r, i, i + 1, text[i] + text[i + 1]) for i in range(n - 1)
            if (r := get(text[i] + " " + text[i + 1])) is not None]
    heapq.heapify(heap)
    while heap:
        _, left, right, merged = heapq.heappop(heap)
        if not text[left] or not text[right] or text[left] + text[right] != merged:
            continue
        text[left] = merged
        text[right] = ""
        nxt[left] = nxt[right]
        if nxt[right] >= 0:
            prv[nxt[right]] = left
        for a, b in ((prv[left], left), (left, nxt[left])):
            if a >= 0 and b >= 0:
                r = get(text[a] + " " + text[b])
                if r is not None:
                    heapq.heappush(heap, (r, a, b, text[a] + text[b]))
    return [t for t in text if t]


def merge_str(syms: list[str], ranks: dict[str, int]) -> list[str]:
    """Merge a list of symbol strings (modified in place for short words)."""
    if len(syms) < 2:
        return syms
    if len(syms) >= HEAP_MIN:
        return _merge_str_heap(syms, ranks)
    return merge_linear(syms, ranks.get)


def merge_ids_linear(ids: list[int], table: PairTable, nv: int) -> list[int]:
    """Merge a short list of token ids in place."""
    pr = [table[ids[i] * nv + ids[i + 1]] for i in range(len(ids) - 1)]
    while pr:
        r = min(pr)
        if r == INF:
            break
        i = pr.index(r)
        ids[i] = r % nv
        del ids[i + 1]
        del pr[i]
        if i > 0:
            pr[i - 1] = table[ids[i - 1] * nv + ids[i]]
        if i < len(pr):
            pr[i] = table[ids[i] * nv + ids[i + 1]]
    return ids


def merge_ids_heap(ids: list[int], table: PairTable, nv: int) -> list[int]:
    """Merge a long list of token ids. Heap entries are plain ints `value * n + left`; an entry
    is live when the pair now starting at `left` still has that value (the same two tokens,
    hence the same rank and left position as the entry llama.cpp would accept)."""
    n = len(ids)
    cur = list(ids)
    alive = [True] * n
    nxt = list(range(1, n)) + [-1]
    prv = list(range(-1, n - 1))
    heap = [r * n + i for i in range(n - 1) if (r := table[cur[i] * nv + cur[i + 1]]) != INF]
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        packed, left = divmod(pop(heap), n)
        right = nxt[left]
        if not alive[left] or right < 0 or table[cur[left] * nv + cur[right]] != packed:
            continue
        cur[left] = packed % nv
        alive[right] = False
        right = nxt[left] = nxt[right]
        if right >= 0:
            prv[right] = left
            r = table[cur[left] * nv + cur[right]]
            if r != INF:
                push(heap, r * n + left)
        before = prv[left]
        if before >= 0:
            r = table[cur[before] * nv + cur[left]]
            if r != INF:
                push(heap, r * n + before)
    return [t for t, ok in zip(cur, alive) if ok]


def merge_ids_long(ids: list[int], table: PairTable, nv: int) -> list[int]:
    """Long words (often runs such as "=====" or "    "): merge every occurrence of the current
    best pair in one NumPy step (leftmost first where occurrences overlap).

    That equals llama.cpp's one-at-a-time order as long as no merge creates a pair ranked below
    the current one (true for merge lists learned by BPE; otherwise the word is redone with the
    heap). When a step merges only a few pairs the heap finishes the word from there."""
    sym = np.array(ids, dtype=np.int64)
    pr = np.full(sym.size, INF, np.int64)
    pr[:-1] = _lookup(table, sym[:-1] * nv + sym[1:])
    while sym.size > 1:
        r = int(pr.min())
        if r == INF:
            break
        pos = np.flatnonzero(pr == r)
        if pos.size > 1:  # overlapping occurrences (equal symbols): every other one in a run
            new_run = np.concatenate(([True], np.diff(pos) != 1))
            first = np.flatnonzero(new_run)
            k = np.arange(pos.size) - first[np.cumsum(new_run) - 1]
            pos = pos[k % 2 == 0]
        if pos.size < 4:
            return merge_ids_heap(sym.tolist(), table, nv)
        sym[pos] = r % nv
        keep = np.ones(sym.size, dtype=bool)
        keep[pos + 1] = False
        sym, pr = sym[keep], pr[keep]
        merged = pos - np.arange(pos.size)
        pr[-1] = INF
        idx = np.unique(np.concatenate((merged - 1, merged)))
        idx = idx[(idx >= 0) & (idx < sym.size - 1)]
        new = _lookup(table, sym[idx] * nv + sym[idx + 1])
        if new.size and int(new.min()) < r:
            return merge_ids_heap(list(ids), table, nv)
        pr[idx] = new
    return sym.tolist()


def merge_ids(ids: list[int], table: PairTable, nv: int) -> list[int]:
    if len(ids) < 2:
        return ids
    if len(ids) >= HEAP_MIN:
        return merge_ids_long(ids, table, nv)
    return merge_ids_linear(ids, table, nv)


_BATCH_TAIL = 24  # fewer words than this left: finish them one by one


def _lookup(table: PairTable, keys: np.ndarray) -> np.ndarray:
    return np.fromiter(map(table.__getitem__, keys.tolist()), np.int64, keys.size)


def merge_batch(words: list[list[int]], table: PairTable, nv: int) -> list[list[int]]:
    """`merge_ids` of every word (each at least 2 and below HEAP_MIN ids), done together.

    Arrays hold the symbols of all unfinished words back to back (`own` = word index per
    symbol, `pr` = value of the pair starting at each symbol, INF at a word's last symbol).
    Each step finds every word's smallest pair value, retires words without merges, and merges
    the leftmost best pair of every other word."""
    n = len(words)
    out: list[list[int] | None] = [None] * n
    lens = np.fromiter(map(len, words), np.int64, n)
    sym = np.fromiter(chain.from_iterable(words), np.int64, int(lens.sum()))
    own = np.repeat(np.arange(n, dtype=np.int64), lens)
    pr = np.full(sym.size, INF, np.int64)
    inner = np.flatnonzero(own[:-1] == own[1:])
    pr[inner] = _lookup(table, sym[inner] * nv + sym[inner + 1])
    while sym.size:
        first = np.flatnonzero(np.concatenate(([True], own[1:] != own[:-1])))
        seg = np.diff(np.append(first, sym.size))
        best = np.minimum.reduceat(pr, first)
        done = best == INF
        if len(first) < _BATCH_TAIL:  # finish the last few words one by one
            for f, s, w in zip(first.tolist(), seg.tolist(), own[first].tolist()):
                out[w] = merge_ids_linear(sym[f:f + s].tolist(), table, nv)
            break
        if done.any():
            for f, s, w in zip(first[done].tolist(), seg[done].tolist(), own[first[done]].tolist()):
                out[w] = sym[f:f + s].tolist()
            keep = np.repeat(~done, seg)
            sym, own, pr = sym[keep], own[keep], pr[keep]
            if not sym.size:
                break
            best, seg = best[~done], seg[~done]
        hits = np.flatnonzero(pr == np.repeat(best, seg))
        left = hits[np.concatenate(([True], own[hits[1:]] != own[hits[:-1]]))]
        sym[left] = best % nv
        keep = np.ones(sym.size, dtype=bool)
        keep[left + 1] = False
        sym, own, pr = sym[keep], own[keep], pr[keep]
        pos = left - np.arange(left.size)  # the merged symbols after the deletions
        size = sym.size
        nxt_same = (pos + 1 < size) & (own[np.minimum(pos + 1, size - 1)] == own[pos])
        pr[pos] = INF
        if nxt_same.any():
            p = pos[nxt_same]
            pr[p] = _lookup(table, sym[p] * nv + sym[p + 1])
        prev_same = (pos > 0) & (own[np.maximum(pos - 1, 0)] == own[pos])
        if prev_same.any():
            p = pos[prev_same] - 1
            pr[p] = _lookup(table, sym[p] * nv + sym[p + 1])
    return out  # type: ignore[return-value]
