"""BPE encoders: byte-level (`gpt2` vocabularies) and Gemma 4's SPM-style BPE (`gemma4`).

Per raw-text fragment, as llama.cpp's `llm_tokenizer_bpe_session`:
1. the pre-tokenizer splits the text into words (Gemma 4 first replaces " " by "▁" and splits
   only at newline runs);
2. byte-level vocabularies map each word's UTF-8 bytes through the GPT-2 byte alphabet;
3. with `ignore_merges` (Llama 3 family) a word that is itself a token is emitted as is; Gemma 4
   does the same for pure newline runs;
4. otherwise the word's characters are merged pairwise, lowest merge rank first, leftmost on
   ties (`merge.py`);
5. every final symbol is looked up; one that is not a token falls back to byte tokens (the
   single-byte token of byte-level vocabularies, `<0xXX>` for Gemma 4), or is dropped.

Speed: results are cached per word. A text's new words are merged together (`merge_batch`)
and the ids are then assembled from the cache without a Python loop per word. Gemma 4's words
are whole lines, so they are first cut before "▁" wherever no merge result could span the cut
(the character before it never precedes "▁" inside a merge result): merges cannot cross such a
cut, which makes each piece independent and cacheable.
"""

from __future__ import annotations

import re
from itertools import chain

from zinc.tokenizer import ucd
from zinc.tokenizer.merge import (
    HEAP_MIN,
    Irregular,
    PairTable,
    merge_batch,
    merge_ids,
    merge_ranks,
    merge_str,
)
from zinc.tokenizer.pretokenize import PreTokenizer
from zinc.tokenizer.vocab import Vocab

_CACHE_MAX = 200_000
_BATCH_MIN = 48  # fewer new words than this: merge them one by one


class BPEEncoder:
    """Encodes raw-text fragments (special tokens already split out) for one BPE vocabulary."""

    def __init__(self, vocab: Vocab) -> None:
        assert vocab.pre is not None
        self.vocab = vocab
        self.t2i = vocab.token_to_id
        self.nv = max(1, vocab.n_vocab)
        self.ranks = merge_ranks(vocab.merges)
        self.table = PairTable(self.ranks, vocab.tokens, self.t2i, self.nv)
        self.pre = PreTokenizer(vocab.pre)
        self.byte_encode = vocab.pre.byte_encode
        self.ignore_merges = vocab.ignore_merges
        self.escape = vocab.escape_whitespaces
        self._trans = ucd.gpt2_translate_table()
        self._cache: dict[str, list[int]] = {}
        self._cut = _chunk_splitter(vocab.merges) if not self.byte_encode else None
        # byte -> id of its single-character GPT-2 token (None when the vocabulary lacks one)
        byte_ids = [self.t2i.get(c) for c in ucd.gpt2_byte_to_char()]
        self._byte_ids = byte_ids if self.byte_encode and None not in byte_ids else None

    def clear_cache(self) -> None:
        self._cache.clear()
        self.table.clear()

    def encode(self, text: str, out: list[int]) -> None:
        """Append the ids of one raw-text fragment to `out`."""
        if self.escape:
            text = text.replace(" ", "\u2581")
        if len(self._cache) > _CACHE_MAX:
            self.clear_cache()
        if self._cut is None:
            words = self.pre.split(text)
        else:
            words = self._gemma4_pieces(text)
        cache = self._cache
        missing = set(words).difference(cache)
        if missing:
            self._fill(missing)
        out.extend(chain.from_iterable(map(cache.__getitem__, words)))

    def _gemma4_pieces(self, text: str) -> list[str]:
        """Newline runs as they are, every other line cut into independent pieces."""
        cut = self._cut
        pieces: list[str] = []
        for word in self.pre.split(text):
            if word[0] == "\n":
                pieces.append(word)
            else:
                pieces += cut(word)
        return [p for p in pieces if p]

    def _fill(self, words: set[str]) -> None:
        """Encode new words into the cache."""
        cache, get, t2i = self._cache, self.t2i.get, self.t2i
        batch_words: list[str] = []
        batch_ids: list[list[int]] = []
        whole = self.ignore_merges or self._cut is not None
        byte_ids = self._byte_ids
        for word in words:
            if whole:
                enc = self._encoded(word)
                if enc in t2i and (self.ignore_merges or enc[0] == "\n"):
                    cache[word] = [t2i[enc]]
                    continue
            if byte_ids is not None:
                ids = list(map(byte_ids.__getitem__, word.encode("utf-8", "surrogatepass")))
            else:
                ids = list(map(get, self._encoded(word)))
            if None in ids:
                cache[word] = self._merge_strings(self._encoded(word))
            elif len(ids) < 2:
                cache[word] = ids
            elif len(ids) >= HEAP_MIN:
                cache[word] = self._merge_one(word, ids)
            else:
                batch_words.append(word)
                batch_ids.append(ids)
        if len(batch_words) >= _BATCH_MIN:
            try:
                for word, ids in zip(batch_words, merge_batch(batch_ids, self.table, self.nv)):
                    cache[word] = ids
                return
            except Irregular:
                pass
        for word, ids in zip(batch_words, batch_ids):
            cache[word] = self._merge_one(word, ids)

    def _encoded(self, word: str) -> str:
        """The word as merges see it (GPT-2 byte alphabet for byte-level vocabularies)."""
        return self._byte_encode(word) if self.byte_encode else word

    def _byte_encode(self, word: str) -> str:
        if word.isascii():
            return word.translate(self._trans)
        return word.encode("utf-8", "surrogatepass").decode("latin-1").translate(self._trans)

    def _merge_one(self, word: str, ids: list[int]) -> list[int]:
        try:
            return merge_ids(list(ids), self.table, self.nv)
        except Irregular:
            return self._merge_strings(self._encoded(word))

    def _merge_strings(self, enc: str) -> list[int]:
        """The general path: merge strings, then ids with byte fallback."""
        t2i = self.t2i
        out: list[int] = []
        for s in merge_str(list(enc), self.ranks):
            tid = t2i.get(s)
            if tid is not None:
                out.append(tid)
                continue
            for b in s.encode("utf-8", "surrogatepass"):
                if self.byte_encode:
                    key = bytes((b,)).decode("utf-8", "surrogateescape")
                else:
                    key = f"<0x{b:02X}>"
                tid = t2i.get(key)
                if tid is not None:
                    out.append(tid)
        return out


def _chunk_splitter(merges: list[str]):
    """A function cutting a Gemma-4 word before every "▁" that no merge result can span: the
    character before the cut never precedes "▁" inside a merge result (the one space of a merge
    line separates its sides, so "x ▁" counts as "x▁")."""
    joined = "\udfff".join(merges)
    joiners = set(re.findall("([^\udfff]) ?\u2581", joined))
    joiners.discard(" ")
    body = "".join(re.escape(c) for c in sorted(joiners))
    cls = f"(?<![{body}])" if body else ""
    return re.compile(f"{cls}(?=\u2581)").split
