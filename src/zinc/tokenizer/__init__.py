"""Tokenizers read from GGUF metadata, matching llama.cpp token for token.

`Tokenizer.from_gguf(path)` / `Tokenizer.from_metadata(md)` support `tokenizer.ggml.model`
`llama` (SentencePiece), `gpt2` (byte-level BPE; pre-tokenizers in `pretokenize.PRE_TYPES`) and
`gemma4`. `StreamDecoder` turns generated ids into text without splitting UTF-8 characters.
"""

from zinc.tokenizer.decode import StreamDecoder
from zinc.tokenizer.tokenizer import Tokenizer

__all__ = ["Tokenizer", "StreamDecoder"]
