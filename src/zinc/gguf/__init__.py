"""GGUF files: the mmap reader, the writer, the ggml type table and the NumPy (de)quantizers."""

from zinc.gguf.constants import BLOCK_LAYOUT, GGMLType, GGUFValueType, ggml_type, row_nbytes
from zinc.gguf.reader import GGUFFile, TensorInfo
from zinc.gguf.writer import GGUFWriter

__all__ = [
    "BLOCK_LAYOUT", "GGMLType", "GGUFValueType", "ggml_type", "row_nbytes",
    "GGUFFile", "TensorInfo", "GGUFWriter", "open_gguf",
]


def open_gguf(path) -> GGUFFile:
    """Open a GGUF file (or the first shard of a split model) read-only."""
    return GGUFFile(path)
