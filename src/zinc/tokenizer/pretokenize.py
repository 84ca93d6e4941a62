"""BPE pre-tokenizers: split raw text into the words that BPE merges work on, as llama.cpp does.

llama.cpp picks a list of regexes by `tokenizer.ggml.pre` and applies them in turn
(`unicode_regex_split`): every regex refines the segments left by the previous one, and both the
matches and the gaps between them become segments. The common patterns run through hand-written
matchers in llama.cpp (GPT-2, Llama 3, Qwen2, Qwen3.5, Gemma 4 newlines) that reproduce the regex
semantics; the others run through `std::regex` on a "collapsed" copy of the text where every
non-ASCII code point stands for its category. Python's `re` (backtracking, ordered alternation,
like ECMAScript) reproduces both on a collapsed copy as well (`Collapser`): every non-ASCII code
point becomes one Latin-1 representative of its llama.cpp category (Unicode 15.1, `ucd.py`), or
of whitespace, so the classes stay small (`\\p{L}` is `[A-Za-z<letter rep>]`) and fast; words are
then cut from the original text at the same offsets. Also:

* `\\s` is Unicode White_Space (never Python's `\\s`, which adds U+001C..U+001F);
* GPT-4o / Tekken's `(?=\\p{L})[^a-z]` ("upper-ish") is "a letter other than a-z" and
  `(?=\\p{L})[^A-Z]` ("lower-ish") "a letter other than A-Z": every non-ASCII letter is both.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from zinc.tokenizer import ucd

_CONTRACTIONS = r"'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]"


# Every non-ASCII code point is replaced by a representative of its class before matching
# (like llama.cpp's collapsed text), so the character classes stay small and `re` stays fast;
# matches are then cut from the original text at the same offsets (the mapping is 1:1).
_REP = {"U": "\x80", "N": "\x81", "L": "\x82", "Z": "\x83", "M": "\x84", "P": "\x85",
        "S": "\x86", "C": "\x87", "WS": "\x88"}
_ASCII_WS = "\t\n\x0b\x0c\r "
_ASCII_P = "!\"#%&'()*,-./:;?@[\\]_{}"


def _classes() -> dict[str, str]:
    esc = re.escape
    lower, upper = "a-z", "A-Z"
    return {
        "L": f"{upper}{lower}{_REP['L']}",
        "N": f"0-9{_REP['N']}",
        "M": _REP["M"],
        "WS": f"{esc(_ASCII_WS)}{_REP['WS']}",
        "UP": f"{upper}{_REP['L']}",
        "LO": f"{lower}{_REP['L']}",
        "P": f"{esc(_ASCII_P)}{_REP['P']}" + esc("$+<=>^~|"),
        "C": _CONTRACTIONS,
    }


class _ShortMap(dict):
    """`str.translate` table for short texts: filled lazily, one bisect per new code point."""

    def __init__(self, starts: list[int], reps: list[int]) -> None:
        super().__init__()
        self._starts, self._reps, self._ws = starts, reps, set(ucd.WHITESPACE)

    def __missing__(self, cp: int) -> int:
        if cp < 0x80:
            rep = cp
        elif cp in self._ws:
            rep = ord(_REP["WS"])
        else:
            rep = self._reps[bisect_right(self._starts, cp) - 1]
        self[cp] = rep
        return rep


class Collapser:
    """Maps text to its collapsed form: ASCII kept, every other code point replaced by the
    representative of its class (vectorized: UTF-32 code points looked up in the run table;
    short texts go through `str.translate`)."""

    def __init__(self) -> None:
        cat = ucd.category_ranges()
        flat = sorted((first, flag) for flag, rs in cat.items() for first, _ in rs)
        self._starts = np.array([f for f, _ in flat], dtype=np.uint32)
        self._reps = np.array([ord(_REP[fl]) for _, fl in flat], dtype=np.uint8)
        self._ws = np.array(sorted(ucd.WHITESPACE), dtype=np.uint32)
        self.short = _ShortMap(self._starts.tolist(), self._reps.tolist())

    def __call__(self, text: str) -> tuple[str, np.ndarray]:
        """The collapsed text and the positions of its non-ASCII characters."""
        cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        out = cps.astype(np.uint8)  # ASCII code points are kept
        high = np.flatnonzero(cps >= 0x80)
        hc = cps[high]
        rep = self._reps[np.searchsorted(self._starts, hc, side="right") - 1]
        rep[np.isin(hc, self._ws)] = ord(_REP["WS"])
        out[high] = rep
        return out.tobytes().decode("latin-1"), high


@lru_cache(maxsize=1)
def collapser() -> Collapser:
    return Collapser()


_SHORT = 512  # shorter non-ASCII texts are collapsed with str.translate (less overhead)
_CATEGORY_FREE = {"ascii3", "newlines"}  # patterns that need no collapsing


# Pattern sources; {X} is replaced by the class bodies above (braces of quantifiers are doubled).
_SOURCES = {
    "gpt2": r"'s|'t|'re|'ve|'m|'ll|'d| ?[{L}]+| ?[{N}]+| ?[^{WS}{L}{N}]+"
            r"|[{WS}]+(?![^{WS}])|[{WS}]+",
    "llama3": r"{C}|[^\r\n{L}{N}]?[{L}]+|[{N}]{{1,3}}| ?[^{WS}{L}{N}]+[\r\n]*|[{WS}]*[\r\n]+"
              r"|[{WS}]+(?![^{WS}])|[{WS}]+",
    "qwen2": r"{C}|[^\r\n{L}{N}]?[{L}]+|[{N}]| ?[^{WS}{L}{N}]+[\r\n]*|[{WS}]*[\r\n]+"
             r"|[{WS}]+(?![^{WS}])|[{WS}]+",
    "qwen35": r"{C}|[^\r\n{L}{N}]?[{L}{M}]+|[{N}]| ?[^{WS}{L}{M}{N}]+[\r\n]*|[{WS}]*[\r\n]+"
              r"|[{WS}]+(?![^{WS}])|[{WS}]+",
    "gpt4o": r"[^\r\n{L}{N}]?[{UP}]*[{LO}]+(?:{C})?|[^\r\n{L}{N}]?[{UP}]+[{LO}]*(?:{C})?"
             r"|[{N}]{{1,3}}| ?[^{WS}{L}{N}]+[\r\n/]*|[{WS}]*[\r\n]+|[{WS}]+(?![^{WS}])|[{WS}]+",
    "tekken": r"[^\r\n{L}{N}]?[{UP}]*[{LO}]+|[^\r\n{L}{N}]?[{UP}]+[{LO}]*"
              r"|[{N}]| ?[^{WS}{L}{N}]+[\r\n/]*|[{WS}]*[\r\n]+|[{WS}]+(?![^{WS}])|[{WS}]+",
    "punct": r"[{P}]+",
    "digits": r"[{N}]+",
    "digit": r"[{N}]",
    "ascii3": r"[0-9][0-9][0-9]",
    "newlines": r"[^\n]+|\n+",
}

# pre-type -> the patterns applied in order (llama.cpp `llm_tokenizer_bpe` regex lists).
_PRE_PATTERNS = {
    "DEFAULT": ("punct", "gpt2", "digits", "ascii3"),
    "GPT2": ("gpt2",),
    "STARCODER": ("digit", "gpt2"),
    "LLAMA3": ("llama3",),
    "QWEN2": ("qwen2",),
    "QWEN35": ("qwen35",),
    "GPT4O": ("gpt4o",),
    "TEKKEN": ("tekken",),
    "GEMMA4": ("newlines",),
}


@dataclass(frozen=True)
class PreType:
    """A pre-tokenizer and the vocabulary flags llama.cpp changes along with it."""

    name: str
    ignore_merges: bool = False
    clean_spaces: bool = True
    add_bos: bool | None = None  # None: keep the type default (BPE: False)
    escape_whitespaces: bool = False
    byte_encode: bool = True
    patterns: tuple[str, ...] = field(default=())


def _pt(name: str, **kw) -> PreType:
    return PreType(name=name, patterns=_PRE_PATTERNS[name], **kw)


_LLAMA3 = _pt("LLAMA3", ignore_merges=True, add_bos=True)
_QWEN2 = _pt("QWEN2", clean_spaces=False)
_GPT4O = _pt("GPT4O", clean_spaces=False)
_GPT2 = _pt("GPT2")
_STARCODER = _pt("STARCODER")

# `tokenizer.ggml.pre` value -> pre-type (the subset of llama.cpp's table that zinc supports).
PRE_TYPES: dict[str, PreType] = {
    "default": _pt("DEFAULT"),
    **{k: _LLAMA3 for k in ("llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral",
                            "midm-2.0", "lfm2", "jina-v5-nano")},
    "dbrx": PreType("DBRX", patterns=("llama3",)),
    "smaug-bpe": PreType("SMAUG", patterns=("llama3",)),
    **{k: _GPT2 for k in ("gpt-2", "phi-2", "gigachat", "a.x-4.0", "mellum", "exaone4")},
    "mpt": PreType("MPT", patterns=("gpt2",)),
    "olmo": PreType("OLMO", patterns=("gpt2",)),
    **{k: _STARCODER for k in ("starcoder", "refact", "codeshell", "exaone", "minerva-7b",
                               "mellum2")},
    "command-r": _pt("STARCODER", clean_spaces=False),
    "smollm": _pt("STARCODER", clean_spaces=False),
    **{k: _QWEN2 for k in ("qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2")},
    "megrez": _pt("QWEN2"),
    "stablelm2": _pt("QWEN2"),
    "qwen35": _pt("QWEN35", clean_spaces=False),
    **{k: _GPT4O for k in ("gpt-4o", "llama4", "kanana2", "talkie")},
    "minimax-m2": _pt("GPT4O", clean_spaces=False),
    "tekken": _pt("TEKKEN", clean_spaces=False, ignore_merges=True, add_bos=True),
    "gemma4": _pt("GEMMA4", escape_whitespaces=True, byte_encode=False),
    "granite-embed-multi-311m": _pt("GEMMA4", escape_whitespaces=True, byte_encode=False),
}


@lru_cache(maxsize=None)
def compiled(name: str) -> re.Pattern[str]:
    """The compiled pattern for one entry of `_SOURCES`."""
    return re.compile(_SOURCES[name].format(**_classes()))


class PreTokenizer:
    """Splits a raw-text fragment into words (str segments; concatenated they give the text)."""

    def __init__(self, pre: PreType) -> None:
        self.pre = pre
        self._patterns = [compiled(p) for p in pre.patterns]
        self._collapse = collapser()
        self._needs_collapse = any(p not in _CATEGORY_FREE for p in pre.patterns)

    def split(self, text: str) -> list[str]:
        if text.isascii() or not self._needs_collapse:
            return self._split_collapsed(text)
        if len(text) < _SHORT:
            words = self._split_collapsed(text.translate(self._collapse.short))
            out, pos = [], 0
            for w in words:
                out.append(text[pos:pos + len(w)])
                pos += len(w)
            return out
        collapsed, high = self._collapse(text)
        words = self._split_collapsed(collapsed)
        # only the words holding a non-ASCII character differ from the original text
        ends = np.cumsum(np.fromiter(map(len, words), np.int64, len(words)))
        touched = np.unique(np.searchsorted(ends, high, side="right"))
        if len(touched) * 2 > len(words):
            bounds = ends.tolist()
            return list(map(text.__getitem__, map(slice, [0] + bounds[:-1], bounds)))
        for i, end in zip(touched.tolist(), ends[touched].tolist()):
            words[i] = text[end - len(words[i]):end]
        return words

    def _split_collapsed(self, text: str) -> list[str]:
        if len(self._patterns) == 1:
            # the single patterns match at every position: no gaps
            return self._patterns[0].findall(text)
        segments = [text]
        for pat in self._patterns:
            out: list[str] = []
            for seg in segments:
                pos = 0
                for m in pat.finditer(seg):
                    start, end = m.span()
                    if start > pos:
                        out.append(seg[pos:start])
                    out.append(seg[start:end])
                    pos = end
                if pos < len(seg):
                    out.append(seg[pos:])
            segments = out
        return segments
