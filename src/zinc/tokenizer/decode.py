"""Token ids back to bytes and text: llama.cpp's `token_to_piece` and `detokenize`, and a
streaming decoder that never splits a UTF-8 character.

Pieces (`token_to_piece`):
* CONTROL and UNKNOWN tokens render as "" unless `special=True` (then their text);
  USER_DEFINED tokens always render as their text;
* NORMAL tokens: SPM and Gemma 4 turn "▁" into " "; byte-level BPE maps every character back
  through the GPT-2 byte alphabet (a character outside it renders as `[UNK_BYTE_0x..]`);
* BYTE tokens `<0xXX>` render as that byte; UNUSED / UNDEFINED tokens render as "".

`detokenize(ids, remove_special, unparse_special)` joins the pieces, drops a leading BOS / trailing
EOS when `remove_special` and the vocabulary adds them, strips one leading space from the first
piece when the vocabulary adds a space prefix (not when a BOS was removed), then, when
`clean_spaces` is set (BPE default; off for Qwen2/3.5, GPT-4o, ...), applies llama.cpp's three
clean-up passes: no space before `? ! . ,`, `" ' "` becomes `'`, no space before `'s 'm 're 've`.
"""

from __future__ import annotations

import codecs
import re

from zinc.errors import TokenizerError
from zinc.tokenizer import ucd
from zinc.tokenizer.vocab import (
    ATTR_BYTE,
    ATTR_CONTROL,
    ATTR_NORMAL,
    ATTR_UNKNOWN,
    ATTR_USER_DEFINED,
    SPM,
    Vocab,
)

_HIDDEN = ATTR_UNKNOWN | ATTR_CONTROL


def _hex_prefix(s: str) -> int:
    """strtol(s, 16) on at most two characters: the leading hex digits, 0 if none."""
    val = 0
    for c in s[:2]:
        if c not in "0123456789abcdefABCDEF":
            break
        val = val * 16 + int(c, 16)
    return val


class PieceTable:
    """Lazily computed piece bytes for every token (llama.cpp's token-to-piece cache)."""

    def __init__(self, vocab: Vocab) -> None:
        self.vocab = vocab
        self._pieces: list[bytes | None] = [None] * vocab.n_vocab
        self._hidden = [bool(a & _HIDDEN) for a in vocab.attrs]
        self._unescape = vocab.type == SPM or vocab.escape_whitespaces
        self._c2b = ucd.gpt2_char_to_byte()

    def piece(self, tid: int, special: bool = False) -> bytes:
        if not 0 <= tid < len(self._pieces):
            raise TokenizerError(f"{self.vocab.source}: token id {tid} out of range "
                                 f"[0, {len(self._pieces)})")
        if not special and self._hidden[tid]:
            return b""
        p = self._pieces[tid]
        if p is None:
            p = self._pieces[tid] = self._compute(tid)
        return p

    def _compute(self, tid: int) -> bytes:
        attr = self.vocab.attrs[tid]
        text = self.vocab.tokens[tid]
        if attr & (_HIDDEN | ATTR_USER_DEFINED):
            return text.encode("utf-8", "surrogateescape")
        if attr & ATTR_NORMAL:
            if self._unescape:
                return text.replace("\u2581", " ").encode("utf-8", "surrogateescape")
            return self._gpt2_bytes(text)
        if attr & ATTR_BYTE:
            return bytes((_hex_prefix(text[3:5]),))
        return b""

    def _gpt2_bytes(self, text: str) -> bytes:
        c2b = self._c2b
        try:
            return bytes(c2b[c] for c in text)
        except KeyError:
            pass
        out = bytearray()
        raw = text.encode("utf-8", "surrogateescape")
        for c in text:
            b = c2b.get(c)
            if b is not None:
                out.append(b)
            else:
                hexs = c.encode("utf-8", "surrogateescape").hex()
                out += b"[UNK_BYTE_0x" + hexs.encode() + raw + b"]"
        return bytes(out)


def detokenize(vocab: Vocab, pieces: PieceTable, ids: list[int], remove_special: bool = False,
               unparse_special: bool = False) -> bytes:
    """llama.cpp's `llama_detokenize` on a list of ids (bytes; may hold partial UTF-8)."""
    ids = list(ids)
    remove_space = vocab.add_space_prefix
    bos, eos = vocab.special["bos"], vocab.special["eos"]
    if remove_special and vocab.add_bos and ids and ids[0] == bos:
        remove_space = False
        ids = ids[1:]
    if remove_special and vocab.add_eos and ids and ids[-1] == eos:
        ids = ids[:-1]
    parts = [pieces.piece(t, unparse_special) for t in ids]
    if remove_space and parts and parts[0][:1] == b" ":
        parts[0] = parts[0][1:]
    text = b"".join(parts)
    if vocab.clean_spaces:
        text = clean_spaces(text)
    return text


_PASS1 = re.compile(rb" (?=[?!.,])")


def clean_spaces(text: bytes) -> bytes:
    """llama.cpp's three clean-up passes of `detokenize`.

    Pass 1 drops every space directly before `? ! . ,` (llama.cpp compacts in place but always
    compares with the original previous byte, so a regex does the same). Passes 2 and 3 only
    act next to " '" and run llama.cpp's loops with the same index arithmetic."""
    text = _PASS1.sub(b"", text)
    if b" '" not in text:
        return text
    buf = bytearray(text)
    n2, total = len(buf), (1 if buf else 0)
    i = 1
    while i < n2:  # pass 2: " ' " -> "'"
        x = buf[i]
        if x == 0x27 and i + 1 < n2 and buf[i - 1] == 0x20 and buf[i + 1] == 0x20:
            total -= 1
            i += 1
            buf[i] = 0
        buf[total] = x
        total += 1
        i += 1
    n3, total = total, (1 if total else 0)
    for i in range(1, n3):  # pass 3: " 's", " 'm", " 're", " 've" lose the space
        x = buf[i]
        if buf[i - 1] == 0x20 and x == 0x27 and i + 1 < n3:
            x1 = buf[i + 1]
            if x1 in b"sm":
                total -= 1
            elif x1 not in b"td" and i + 2 < n3:
                x2 = buf[i + 2]
                if (x1, x2) in ((0x72, 0x65), (0x76, 0x65)):
                    total -= 1
        buf[total] = x
        total += 1
    return bytes(buf[:total])


class StreamDecoder:
    """Incremental detokenizer for generated tokens.

    `push(id)` returns the text that became complete with this token: bytes of a character
    split over several tokens are held back until the character is whole; invalid bytes become
    U+FFFD. `flush()` returns what is left (an incomplete character becomes U+FFFD) and resets.
    Pieces are raw `token_to_piece` output (no leading-space strip, no clean-up passes), as
    llama.cpp's server streams them.
    """

    def __init__(self, pieces: PieceTable, special: bool = False) -> None:
        self._piece = pieces.piece
        self._special = special
        self._dec = codecs.getincrementaldecoder("utf-8")("replace")

    def push(self, token_id: int) -> str:
        return self._dec.decode(self._piece(token_id, self._special))

    def push_many(self, ids) -> str:
        return "".join(self.push(t) for t in ids)

    def flush(self) -> str:
        out = self._dec.decode(b"", final=True)
        self._dec.reset()
        return out
