"""llama.cpp's tokenizer as an oracle (llama-cpp-python, low-level C API, vocab-only loads).

    tokenize(path, text, add_special=True, parse_special=False) -> list[int]   # llama_tokenize
    detokenize(path, ids, remove_special=False, unparse_special=False) -> str  # llama_detokenize
    detokenize_bytes(...) -> bytes;  token_to_piece(path, id, special=False) -> bytes
    vocab_info(path) -> dict (n_vocab, bos, eos, eot, add_bos, add_eos, eog ids, attributes)

Models are loaded once per path with `vocab_only=True` and kept for the process. `llama_cpp` is
imported lazily (tests and benchmarks only).
"""

from __future__ import annotations

import ctypes
import os
from functools import lru_cache
from pathlib import Path

from zinc.errors import ZincError


class TokenizerOracleError(ZincError):
    """llama.cpp could not load a vocabulary or tokenize a text."""


_models: dict[str, tuple[object, object]] = {}


def _llama():
    from zinc.testing.oracle import _lib

    return _lib()


def _vocab(path: str | os.PathLike):
    key = str(Path(path).resolve())
    hit = _models.get(key)
    if hit is not None:
        return hit[1]
    llama_cpp = _llama()
    params = llama_cpp.llama_model_default_params()
    params.vocab_only = True
    model = llama_cpp.llama_model_load_from_file(key.encode(), params)
    if not model:
        raise TokenizerOracleError(f"{key}: llama.cpp could not load the vocabulary")
    vocab = llama_cpp.llama_model_get_vocab(model)
    _models[key] = (model, vocab)
    return vocab


def tokenize(path: str | os.PathLike, text: str | bytes, add_special: bool = True,
             parse_special: bool = False) -> list[int]:
    """`llama_tokenize(vocab, text, add_special, parse_special)`; str is encoded as UTF-8
    (lone surrogates with surrogatepass, as zinc does)."""
    llama_cpp = _llama()
    vocab = _vocab(path)
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    cap = len(data) + 8
    while True:
        buf = (llama_cpp.llama_token * cap)()
        n = llama_cpp.llama_tokenize(vocab, data, len(data), buf, cap, add_special, parse_special)
        if n >= 0:
            return list(buf[:n])
        if -n <= cap:
            raise TokenizerOracleError(f"{path}: llama_tokenize failed ({n})")
        cap = -n


def detokenize_bytes(path: str | os.PathLike, ids: list[int], remove_special: bool = False,
                     unparse_special: bool = False) -> bytes:
    """`llama_detokenize(vocab, ids, remove_special, unparse_special)` as raw bytes."""
    llama_cpp = _llama()
    vocab = _vocab(path)
    toks = (llama_cpp.llama_token * max(1, len(ids)))(*ids)
    cap = 64 + 16 * len(ids)
    while True:
        buf = ctypes.create_string_buffer(cap)
        n = llama_cpp.llama_detokenize(vocab, toks, len(ids), buf, cap, remove_special,
                                       unparse_special)
        if n >= 0:
            return buf.raw[:n]
        cap = -n + 1


def detokenize(path: str | os.PathLike, ids: list[int], remove_special: bool = False,
               unparse_special: bool = False) -> str:
    """`detokenize_bytes` decoded as UTF-8 with U+FFFD for invalid bytes."""
    return detokenize_bytes(path, ids, remove_special, unparse_special).decode("utf-8", "replace")


def token_to_piece(path: str | os.PathLike, token_id: int, special: bool = False) -> bytes:
    """`llama_token_to_piece(vocab, id, lstrip=0, special)`."""
    llama_cpp = _llama()
    vocab = _vocab(path)
    cap = 64
    while True:
        buf = ctypes.create_string_buffer(cap)
        n = llama_cpp.llama_token_to_piece(vocab, token_id, buf, cap, 0, special)
        if n >= 0:
            return buf.raw[:n]
        cap = -n + 1


@lru_cache(maxsize=None)
def _info(key: str) -> dict:
    llama_cpp = _llama()
    vocab = _vocab(key)
    n = llama_cpp.llama_vocab_n_tokens(vocab)
    null = lambda t: None if t < 0 else int(t)  # noqa: E731
    return {
        "n_vocab": n,
        "bos": null(llama_cpp.llama_vocab_bos(vocab)),
        "eos": null(llama_cpp.llama_vocab_eos(vocab)),
        "eot": null(llama_cpp.llama_vocab_eot(vocab)),
        "pad": null(llama_cpp.llama_vocab_pad(vocab)),
        "add_bos": bool(llama_cpp.llama_vocab_get_add_bos(vocab)),
        "add_eos": bool(llama_cpp.llama_vocab_get_add_eos(vocab)),
        "eog": frozenset(i for i in range(n) if llama_cpp.llama_vocab_is_eog(vocab, i)),
        "attrs": tuple(int(llama_cpp.llama_vocab_get_attr(vocab, i)) for i in range(n)),
    }


def vocab_info(path: str | os.PathLike) -> dict:
    """Special ids, add_bos/add_eos, the EOG set and every token's attribute bits."""
    return _info(str(Path(path).resolve()))
