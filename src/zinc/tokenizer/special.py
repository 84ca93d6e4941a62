"""Splitting special tokens out of text, as llama.cpp's `tokenizer_st_partition`.

llama.cpp takes the special tokens in special-cache order (longest text first) and, for each,
claims its leftmost non-overlapping occurrences that lie entirely in text not claimed yet.

Fast path: when no special text's proper suffix is a proper prefix of another special text
(runs of one repeated character excepted, e.g. Gemma's "\\n\\n" / "\\n\\n\\n"), occurrences of
different tokens can only nest, never cross, and the rule gives the same result as a single
left-to-right scan taking the longest token at each position. That scan is one `re` search
over a trie-shaped pattern (longer continuations tried before stopping).

Exact path otherwise: collect every occurrence of every token, then replay llama.cpp's rule
over intervals.
"""

from __future__ import annotations

import re
from bisect import bisect_left


def _is_run(t: str) -> bool:
    return len(t) > 0 and t.count(t[0]) == len(t)


def overlap_free(texts: list[str]) -> bool:
    """True when no text's proper suffix is a proper prefix of another (runs of one character
    excepted)."""
    prefixes: dict[str, list[str]] = {}
    for t in texts:
        for k in range(1, len(t)):
            prefixes.setdefault(t[:k], []).append(t)
    for a in texts:
        for k in range(1, len(a)):
            for b in prefixes.get(a[k:], ()):
                if not (_is_run(a) and _is_run(b) and a[0] == b[0]):
                    return False
    return True


def trie_pattern(texts: list[str]) -> str:
    """A regex matching the longest of `texts` at a position."""
    root: dict = {}
    for t in texts:
        node = root
        for ch in t:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict) -> str:
        kids = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not kids:
            return ""
        body = kids[0] if len(kids) == 1 else "(?:" + "|".join(kids) + ")"
        if "" in node:  # a token ends here: try the longer ones first
            return body + "?" if len(kids) == 1 and len(kids[0]) == 1 else "(?:" + body + ")?"
        return body

    return emit(root)


class SpecialMatcher:
    """Splits text into raw strings and special-token ids for one set of special tokens."""

    def __init__(self, tokens: list[str], ids: list[int]) -> None:
        self.by_text: dict[str, int] = {}
        for tid in ids:  # ids in special-cache order; equal texts: the first wins
            self.by_text.setdefault(tokens[tid], tid)
        texts = list(self.by_text)
        self.rank = {t: k for k, t in enumerate(texts)}
        self._regex: re.Pattern[str] | None = None
        self.fast = bool(texts) and max(map(len, texts)) <= 500 and overlap_free(texts)
        self._first_re = None
        if texts:
            firsts = "".join(re.escape(c) for c in sorted({t[0] for t in texts}))
            self._first_re = re.compile(f"[{firsts}]")
            lengths: dict[str, set[int]] = {}
            for t in texts:
                lengths.setdefault(t[0], set()).add(len(t))
            self._lengths = {c: sorted(ls, reverse=True) for c, ls in lengths.items()}

    def split(self, text: str) -> list[str | int]:
        if self._first_re is None or not text:
            return [text] if text else []
        if self.fast:
            return self._split_fast(text)
        return self._split_exact(text)

    def _split_fast(self, text: str) -> list[str | int]:
        if self._regex is None:
            self._regex = re.compile(trie_pattern(list(self.by_text)))
        out: list[str | int] = []
        pos = 0
        by_text = self.by_text
        for m in self._regex.finditer(text):
            start, end = m.span()
            if start > pos:
                out.append(text[pos:start])
            out.append(by_text[m.group()])
            pos = end
        if pos < len(text):
            out.append(text[pos:])
        return out

    def _split_exact(self, text: str) -> list[str | int]:
        occ: dict[str, list[int]] = {}  # token text -> start positions (ascending)
        by_text, lengths = self.by_text, self._lengths
        for m in self._first_re.finditer(text):  # type: ignore[union-attr]
            p = m.start()
            for n in lengths[text[p]]:
                piece = text[p:p + n]
                if piece in by_text:
                    occ.setdefault(piece, []).append(p)
        starts: list[int] = []  # claimed intervals, sorted and disjoint
        ends: list[int] = []
        owner: list[int] = []
        for t in sorted(occ, key=self.rank.__getitem__):
            n = len(t)
            last_end = -1
            for p in occ[t]:
                if p < last_end:
                    continue
                k = bisect_left(starts, p)
                if (k < len(starts) and starts[k] < p + n) or (k > 0 and ends[k - 1] > p):
                    continue
                starts.insert(k, p)
                ends.insert(k, p + n)
                owner.insert(k, by_text[t])
                last_end = p + n
        out: list[str | int] = []
        pos = 0
        for s, e, tid in zip(starts, ends, owner):
            if s > pos:
                out.append(text[pos:s])
            out.append(tid)
            pos = e
        if pos < len(text):
            out.append(text[pos:])
        return out
