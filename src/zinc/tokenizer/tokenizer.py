"""`Tokenizer`: llama.cpp-compatible encode/decode for the vocabularies stored in GGUF files.

    tok = Tokenizer.from_gguf("model.gguf")          # vocab-only files work too
    ids = tok.encode("Hello", add_special=True, parse_special=False)
    text = tok.decode(ids)                           # CONTROL tokens hidden, like llama.cpp
    dec = tok.stream_decoder(); s = dec.push(i) ...; s += dec.flush()

`encode(text, add_special, parse_special)` is `llama_tokenize`: special tokens are split out of
the text first (CONTROL/UNKNOWN ones only with `parse_special`; USER_DEFINED ones always),
longest token text first; the raw fragments in between go through the SPM or BPE encoder;
`add_special` adds BOS/EOS as the vocabulary's flags say (GGUF keys over llama.cpp's per-model
defaults; Gemma 4 always adds BOS).
"""

from __future__ import annotations

import os
from typing import Any

from zinc.errors import TokenizerError
from zinc.tokenizer.bpe import BPEEncoder
from zinc.tokenizer.decode import PieceTable, StreamDecoder, detokenize
from zinc.tokenizer.special import SpecialMatcher
from zinc.tokenizer.spm import SPMEncoder
from zinc.tokenizer.vocab import ATTR_CONTROL, ATTR_UNKNOWN, SPM, Vocab


class Tokenizer:
    """A vocabulary plus its encoder and decoder. Build with `from_gguf` or `from_metadata`."""

    def __init__(self, vocab: Vocab) -> None:
        self.vocab = vocab
        self._enc = SPMEncoder(vocab) if vocab.type == SPM else BPEEncoder(vocab)
        self._pieces = PieceTable(vocab)
        cache = vocab.special_cache
        user = [t for t in cache if not vocab.attrs[t] & (ATTR_CONTROL | ATTR_UNKNOWN)]
        self._match_all = SpecialMatcher(vocab.tokens, cache)
        self._match_user = SpecialMatcher(vocab.tokens, user)

    @classmethod
    def from_gguf(cls, path: str | os.PathLike) -> "Tokenizer":
        from zinc.gguf import GGUFFile

        with GGUFFile(path) as f:
            return cls.from_metadata(f.metadata, source=str(path))

    @classmethod
    def from_metadata(cls, metadata: dict[str, Any], source: str = "") -> "Tokenizer":
        return cls(Vocab.from_metadata(metadata, source))

    # --- facts -----------------------------------------------------------------------------
    @property
    def n_vocab(self) -> int:
        return self.vocab.n_vocab

    @property
    def bos_id(self) -> int | None:
        return self.vocab.special["bos"]

    @property
    def eos_id(self) -> int | None:
        return self.vocab.special["eos"]

    @property
    def eot_id(self) -> int | None:
        return self.vocab.special["eot"]

    @property
    def pad_id(self) -> int | None:
        return self.vocab.special["pad"]

    @property
    def eog_ids(self) -> frozenset[int]:
        """End-of-generation ids, computed as llama.cpp's `llama_vocab_is_eog`."""
        return self.vocab.eog_ids

    @property
    def add_bos(self) -> bool:
        return self.vocab.add_bos

    @property
    def add_eos(self) -> bool:
        return self.vocab.add_eos

    def is_eog(self, token_id: int) -> bool:
        return token_id in self.vocab.eog_ids

    def token_text(self, token_id: int) -> str:
        """The vocabulary entry as stored (GPT-2 alphabet / "▁" escapes included)."""
        return self.vocab.tokens[token_id]

    def token_attr(self, token_id: int) -> int:
        """llama.cpp's `llama_token_attr` bits for a token (see vocab.ATTR_*)."""
        return self.vocab.attrs[token_id]

    def clear_cache(self) -> None:
        """Forget cached word encodings (memory; benchmarks of the cold path)."""
        self._enc.clear_cache()

    def token_id(self, text: str) -> int | None:
        """The id of a token given its vocabulary text, or None."""
        return self.vocab.token_to_id.get(text)

    # --- encode ----------------------------------------------------------------------------
    def encode(self, text: str, add_special: bool = True, parse_special: bool = False) -> list[int]:
        """Token ids of `text`, identical to llama.cpp's `llama_tokenize`."""
        v = self.vocab
        out: list[int] = []
        frags = (self._match_all if parse_special else self._match_user).split(text)
        if add_special and v.add_bos:
            out.append(self._required("bos"))
        if v.type == SPM:
            prev_special = True
            for frag in frags:
                if isinstance(frag, int):
                    out.append(frag)
                    prev_special = True
                else:
                    prefix = " " if v.add_space_prefix and prev_special else ""
                    self._enc.encode(prefix + frag, out)
                    prev_special = False
        else:
            for frag in frags:
                if isinstance(frag, int):
                    out.append(frag)
                else:
                    self._enc.encode(frag, out)
        if add_special and v.add_eos:
            out.append(self._required("eos"))
        return out

    def _required(self, name: str) -> int:
        tid = self.vocab.special[name]
        if tid is None:
            raise TokenizerError(f"{self.vocab.source}: the vocabulary adds {name.upper()} "
                                 f"but has no tokenizer.ggml.{name}_token_id")
        return tid

    # --- decode ----------------------------------------------------------------------------
    def token_to_piece(self, token_id: int, special: bool = False) -> bytes:
        """The bytes one token renders to (may be part of a UTF-8 character).

        CONTROL/UNKNOWN tokens give b"" unless `special`; see `zinc.tokenizer.decode`."""
        return self._pieces.piece(token_id, special)

    def decode_bytes(self, ids, special: bool = False, remove_special: bool = False) -> bytes:
        """llama.cpp's `llama_detokenize(ids, remove_special, unparse_special=special)`."""
        return detokenize(self.vocab, self._pieces, ids, remove_special, special)

    def decode(self, ids, special: bool = False, remove_special: bool = False) -> str:
        """`decode_bytes` as text; invalid UTF-8 (e.g. a cut character) becomes U+FFFD.

        `special=False` hides CONTROL/UNKNOWN tokens (BOS, EOS, <|im_end|>, ...), as llama.cpp
        and llama-cpp-python do by default; `remove_special` drops a leading BOS / trailing EOS
        that the vocabulary adds. A leading space added by SPM's space prefix is removed."""
        return self.decode_bytes(ids, special, remove_special).decode("utf-8", "replace")

    def stream_decoder(self, special: bool = False) -> StreamDecoder:
        """An incremental decoder for generated ids (see `StreamDecoder`)."""
        return StreamDecoder(self._pieces, special)

    def __repr__(self) -> str:
        pre = self.vocab.pre.name if self.vocab.pre else "-"
        return (f"Tokenizer({self.vocab.model!r}, pre={pre}, n_vocab={self.n_vocab}, "
                f"bos={self.bos_id}, eos={self.eos_id}, add_bos={self.add_bos})")
