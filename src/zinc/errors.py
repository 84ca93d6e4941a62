"""Typed errors of zinc. Every message names the file, tensor or field at fault."""

from __future__ import annotations


class ZincError(Exception):
    """Base class of every error zinc raises on purpose."""


class GGUFError(ZincError):
    """A GGUF file is malformed, truncated or uses something zinc cannot read.

    ``path`` is the file and ``where`` the field or tensor that is at fault (may be empty).
    """

    def __init__(self, path: object, message: str, where: str = "") -> None:
        self.path = str(path)
        self.where = where
        self.reason = message
        loc = f" [{where}]" if where else ""
        super().__init__(f"{self.path}{loc}: {message}")


class UnsupportedModelError(ZincError):
    """The model (architecture, tokenizer model or pre-tokenizer, ...) is not supported."""


class TokenizerError(ZincError):
    """A tokenizer cannot be built or used (bad vocab metadata, invalid ids, ...)."""


class BackendUnavailableError(ZincError):
    """A requested compute backend cannot run on this machine (reason in the message)."""


class QuantError(ZincError):
    """Bad input to a (de)quantizer: unknown type, wrong length, unsupported type."""
