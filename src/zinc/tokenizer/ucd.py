"""Unicode facts the tokenizers need, as llama.cpp sees them.

* Category of every code point (one flag: U undefined, N number, L letter, Z separator, M mark,
  P punctuation, S symbol, C control) from the generated Unicode 15.1 table
  (`_unicode_table.py`), so the pre-tokenizers behave identically whatever Unicode version the
  running Python ships.
* Whitespace: the 25 code points of Unicode's White_Space property (llama.cpp's `\\s`; unlike
  `str.isspace` it excludes U+001C..U+001F).
* The GPT-2 byte <-> unicode alphabet used by byte-level BPE vocabularies.
"""

from __future__ import annotations

from functools import lru_cache

from zinc.tokenizer._unicode_table import RUNS

MAX_CODEPOINT = 0x110000

WHITESPACE = (
    0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680,
    0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A,
    0x2028, 0x2029, 0x202F, 0x205F, 0x3000,
)


@lru_cache(maxsize=1)
def category_ranges() -> dict[str, list[tuple[int, int]]]:
    """flag letter (U N L Z M P S C) -> sorted inclusive code point ranges."""
    body = "".join(RUNS)
    starts = [(int(body[i:i + 6], 16), body[i + 6]) for i in range(0, len(body), 7)]
    out: dict[str, list[tuple[int, int]]] = {}
    for k, (first, flag) in enumerate(starts):
        last = starts[k + 1][0] - 1 if k + 1 < len(starts) else MAX_CODEPOINT - 1
        out.setdefault(flag, []).append((first, last))
    return out


@lru_cache(maxsize=1)
def gpt2_byte_to_char() -> tuple[str, ...]:
    """GPT-2 `bytes_to_unicode`: printable Latin-1 bytes map to themselves, the other 68 bytes to
    U+0100, U+0101, ... in increasing byte order."""
    keep = set(range(0x21, 0x7F)) | set(range(0xA1, 0xAD)) | set(range(0xAE, 0x100))
    table = []
    extra = 0
    for b in range(256):
        if b in keep:
            table.append(chr(b))
        else:
            table.append(chr(256 + extra))
            extra += 1
    return tuple(table)


@lru_cache(maxsize=1)
def gpt2_char_to_byte() -> dict[str, int]:
    return {c: b for b, c in enumerate(gpt2_byte_to_char())}


@lru_cache(maxsize=1)
def gpt2_translate_table() -> dict[int, str]:
    """`str.translate` table mapping a Latin-1-decoded byte string to GPT-2 characters."""
    return {b: c for b, c in enumerate(gpt2_byte_to_char()) if chr(b) != c}
