"""SentencePiece-style encoder (`tokenizer.ggml.model = "llama"`: Llama 1/2, Gemma 3, ...).

Per raw-text fragment, as llama.cpp's `llm_tokenizer_spm_session`: the caller prefixes a space
when `add_space_prefix` is set and the fragment starts the text or follows a special token; every
" " becomes "▁"; the text is split into characters and adjacent symbols are merged while their
concatenation is a vocabulary token, highest token score first (leftmost on ties). Each final
symbol is emitted as its token, or as `<0xXX>` byte tokens (the single-character token when a
byte token is missing).

llama.cpp merges over the whole fragment. zinc first cuts the text before every "▁" whose
preceding character never precedes "▁" inside a vocabulary token: no merge can span such a cut,
so the pieces are independent, and each is merged once and cached.
"""

from __future__ import annotations

import heapq
import re

from zinc.tokenizer.merge import merge_linear
from zinc.tokenizer.vocab import Vocab

_HEAP_MIN = 96
_CACHE_MAX = 200_000
_NONE = float("inf")


def _merge_heap(syms: list[str], score) -> list[str]:
    """llama.cpp's priority-queue loop; an entry is stale when a side was merged or grew."""
    n = len(syms)
    text = list(syms)
    nxt = list(range(1, n)) + [-1]
    prv = list(range(-1, n - 1))
    heap: list[tuple[float, int, int, int]] = []
    for i in range(n - 1):
        s = score(text[i] + text[i + 1], None)
        if s is not None:
            heap.append((s, i, i + 1, len(text[i]) + len(text[i + 1])))
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        _, left, right, size = pop(heap)
        if not text[left] or not text[right] or len(text[left]) + len(text[right]) != size:
            continue
        text[left] += text[right]
        text[right] = ""
        nxt[left] = nxt[right]
        if nxt[right] >= 0:
            prv[nxt[right]] = left
        for a, b in ((prv[left], left), (left, nxt[left])):
            if a >= 0 and b >= 0:
                s = score(text[a] + text[b], None)
                if s is not None:
                    push(heap, (s, a, b, len(text[a]) + len(text[b])))
    return [t for t in text if t]


class SPMEncoder:
    """Encodes raw-text fragments (special tokens already split out) for one SPM vocabulary."""

    def __init__(self, vocab: Vocab) -> None:
        self.vocab = vocab
        self.t2i = vocab.token_to_id
        # negated token score by text: the merge loops pick the lowest value
        scores = vocab.scores
        self._neg_score = {t: -scores[i] for t, i in vocab.token_to_id.items()}
        self._cache: dict[str, list[int]] = {}
        self._cut = _piece_splitter(vocab.token_to_id)
        self._bytes = [self._byte_token(b) for b in range(256)]

    def _byte_token(self, b: int) -> int | None:
        tid = self.t2i.get(f"<0x{b:02X}>")
        if tid is None:
            tid = self.t2i.get(bytes((b,)).decode("utf-8", "surrogateescape"))
        return tid

    def clear_cache(self) -> None:
        self._cache.clear()

    def encode(self, text: str, out: list[int]) -> None:
        """Append the ids of one fragment (already space-prefixed if needed) to `out`."""
        text = text.replace(" ", "\u2581")
        cache = self._cache
        if len(cache) > _CACHE_MAX:
            cache.clear()
        for piece in self._cut(text):
            if not piece:
                continue
            ids = cache.get(piece)
            if ids is None:
                ids = cache[piece] = self._encode_piece(piece)
            out += ids

    def _encode_piece(self, piece: str) -> list[int]:
        syms = list(piece)
        if len(syms) >= 2:
            score = self._neg_score.get
            if len(syms) >= _HEAP_MIN:
                syms = _merge_heap(syms, score)
            else:
                syms = merge_linear(syms, score, "", _NONE)
        out: list[int] = []
        t2i = self.t2i
        for s in syms:
            tid = t2i.get(s)
            if tid is not None:
                out.append(tid)
                continue
            for b in s.encode("utf-8", "surrogatepass"):
                tid = self._bytes[b]
                if tid is not None:
                    out.append(tid)
        return out


def _piece_splitter(token_to_id: dict[str, int]):
    """A function cutting text before every "▁" that no vocabulary token can span."""
    joined = "\udfff".join(token_to_id)
    joiners = set(re.findall("([^\udfff])\u2581", joined))
    body = "".join(re.escape(c) for c in sorted(joiners))
    cls = f"(?<![{body}])" if body else ""
    return re.compile(f"{cls}(?=\u2581)").split
