"""The llama.cpp oracle (llama-cpp-python): per-position logits, quantization, dequantized twins.

Used by tests and benchmarks only; `llama_cpp` is imported lazily so zinc never needs it at run time.

* `logits(path, tokens, ...)`: llama.cpp's logits for every position of a token list, run on the CPU
  with the settings that matter pinned (f32 KV cache and flash attention off by default) and
  returned together with those settings.
* `quantize(src, dst, ftype)`: llama.cpp's own quantizer (`llama_model_quantize`), e.g. "Q4_K_M".
* `dequantized_twin(src, dst)`: every tensor converted to F32 by llama.cpp's dequantizer: plain f32
  math on exactly the weights of a quantized file (the exact reference for zinc's f32 backends).
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from zinc.errors import ZincError

_KV_TYPES = {"f32": 0, "f16": 1, "q8_0": 8}  # ggml type ids
_silenced = False


class OracleError(ZincError):
    """llama.cpp refused a file or an operation (the message says which and why)."""


def _lib():
    global _silenced
    import llama_cpp

    if not _silenced:
        llama_cpp.llama_backend_init()
        if os.environ.get("ZINC_ORACLE_VERBOSE") != "1":
            cb = llama_cpp.llama_log_callback(lambda level, text, user: None)
            _lib.keep = cb  # keep the callback alive
            llama_cpp.llama_log_set(cb, ctypes.c_void_p(0))
        _silenced = True
    return llama_cpp


@dataclass(frozen=True)
class OracleSettings:
    """Every llama.cpp setting that changes the numbers, recorded with each result."""

    n_ctx: int = 0  # 0: smallest multiple of 256 that holds the tokens
    n_batch: int = 512
    n_ubatch: int = 512
    n_threads: int = 2
    kv_type: str = "f32"
    flash_attn: bool = False
    # llama.cpp's Hadamard rotation of Q, K, V in front of a quantized KV cache (on by default since 2026-04;
    # LLAMA_ATTN_ROT_DISABLE): zinc stores plain q8_0 cells, so the oracle turns it off unless asked
    attn_rot: bool = False
    use_extra_bufts: bool = True  # CPU weight repacking (llama.cpp's default)
    llama_cpp_version: str = ""


def ftype_id(ftype: str | int) -> int:
    """LLAMA_FTYPE value for a name such as "Q4_K_M", "F32", "MXFP4_MOE" (or an int)."""
    if isinstance(ftype, int):
        return ftype
    llama_cpp = _lib()
    name = ftype.upper()
    for key in (f"LLAMA_FTYPE_MOSTLY_{name}", f"LLAMA_FTYPE_{name}", f"LLAMA_FTYPE_ALL_{name}"):
        if hasattr(llama_cpp, key):
            return int(getattr(llama_cpp, key))
    raise OracleError(f"unknown llama.cpp file type {ftype!r}")


class LlamaCppModel:
    """A model loaded in llama.cpp on the CPU; `logits()` runs a fresh context each call."""

    def __init__(self, path: str | os.PathLike, settings: OracleSettings | None = None) -> None:
        llama_cpp = _lib()
        self.path = Path(path)
        s = settings or OracleSettings()
        self.settings = OracleSettings(**{**asdict(s), "llama_cpp_version": llama_cpp.__version__})
        mp = llama_cpp.llama_model_default_params()
        mp.n_gpu_layers = 0
        mp.use_extra_bufts = s.use_extra_bufts
        self._model = llama_cpp.llama_model_load_from_file(str(self.path).encode(), mp)
        if not self._model:
            raise OracleError(f"{self.path}: llama.cpp could not load the model (set ZINC_ORACLE_VERBOSE=1 for its log)")
        self.n_vocab = llama_cpp.llama_vocab_n_tokens(llama_cpp.llama_model_get_vocab(self._model))

    def _context(self, n_tokens: int):
        llama_cpp, s = _lib(), self.settings
        cp = llama_cpp.llama_context_default_params()
        cp.n_ctx = s.n_ctx or (n_tokens + 255) // 256 * 256
        cp.n_batch, cp.n_ubatch = s.n_batch, min(s.n_batch, s.n_ubatch)
        cp.n_threads = cp.n_threads_batch = s.n_threads
        cp.flash_attn_type = (llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED if s.flash_attn
                              else llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED)
        cp.type_k = cp.type_v = _KV_TYPES[s.kv_type]
        if s.attn_rot:  # read by llama.cpp when the context (its KV cache) is made
            os.environ.pop("LLAMA_ATTN_ROT_DISABLE", None)
        else:
            os.environ["LLAMA_ATTN_ROT_DISABLE"] = "1"
        ctx = llama_cpp.llama_init_from_model(self._model, cp)
        if not ctx:
            raise OracleError(f"{self.path}: llama.cpp could not create a context (n_ctx={cp.n_ctx})")
        return ctx

    def _decode(self, ctx, tokens: list[int], pos0: int, all_logits: bool) -> np.ndarray:
        """Decode `tokens` at positions pos0.. in chunks of n_batch; logits of all rows or the last."""
        llama_cpp, n_batch = _lib(), self.settings.n_batch
        rows = []
        for start in range(0, len(tokens), n_batch):
            chunk = tokens[start : start + n_batch]
            last_chunk = start + n_batch >= len(tokens)
            b = llama_cpp.llama_batch_init(len(chunk), 0, 1)
            try:
                for i, t in enumerate(chunk):
                    want = all_logits or (last_chunk and i == len(chunk) - 1)
                    b.token[i], b.pos[i], b.n_seq_id[i], b.logits[i] = int(t), pos0 + start + i, 1, int(want)
                    b.seq_id[i][0] = 0
                b.n_tokens = len(chunk)
                rc = llama_cpp.llama_decode(ctx, b)
                if rc != 0:
                    raise OracleError(f"{self.path}: llama_decode returned {rc}")
                for i in range(len(chunk)) if all_logits else ([len(chunk) - 1] if last_chunk else []):
                    ptr = llama_cpp.llama_get_logits_ith(ctx, i)
                    rows.append(np.ctypeslib.as_array(ptr, shape=(self.n_vocab,)).copy())
            finally:
                llama_cpp.llama_batch_free(b)
        return np.stack(rows).astype(np.float32, copy=False)

    def logits(self, tokens: list[int]) -> np.ndarray:
        """float32 logits of shape (len(tokens), n_vocab), teacher-forced from an empty context."""
        if not tokens:
            raise OracleError("logits() needs at least one token")
        ctx = self._context(len(tokens))
        try:
            return self._decode(ctx, list(tokens), 0, all_logits=True)
        finally:
            _lib().llama_free(ctx)

    def greedy(self, tokens: list[int], n: int) -> list[int]:
        """llama.cpp's greedy continuation: the prompt in one batch, then one token at a time."""
        if not tokens:
            raise OracleError("greedy() needs at least one prompt token")
        ctx = self._context(len(tokens) + n)
        out: list[int] = []
        try:
            todo, pos = list(tokens), 0
            while len(out) < n:
                row = self._decode(ctx, todo, pos, all_logits=False)[-1]
                pos += len(todo)
                todo = [int(np.argmax(row))]
                out.append(todo[0])
        finally:
            _lib().llama_free(ctx)
        return out

    def close(self) -> None:
        if self._model:
            _lib().llama_model_free(self._model)
            self._model = None

    def __enter__(self) -> "LlamaCppModel":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def logits(path: str | os.PathLike, tokens: list[int], **settings) -> tuple[np.ndarray, OracleSettings]:
    """llama.cpp's per-position logits for `tokens` and the settings used (see OracleSettings)."""
    with LlamaCppModel(path, OracleSettings(**settings)) as m:
        return m.logits(tokens), m.settings


def quantize(src: str | os.PathLike, dst: str | os.PathLike, ftype: str | int, *, nthread: int = 2,
             pure: bool = False, allow_requantize: bool = False, output_type: int | None = None,
             token_embd_type: int | None = None) -> Path:
    """Quantize `src` to `dst` with llama.cpp's quantizer (`ftype` like "Q4_K_M", "Q8_0", "MXFP4_MOE")."""
    llama_cpp = _lib()
    qp = llama_cpp.llama_model_quantize_default_params()
    qp.nthread = nthread
    qp.ftype = ftype_id(ftype)
    qp.pure = pure
    qp.allow_requantize = allow_requantize
    if output_type is not None:
        qp.output_tensor_type = output_type
    if token_embd_type is not None:
        qp.token_embedding_type = token_embd_type
    rc = llama_cpp.llama_model_quantize(str(src).encode(), str(dst).encode(), ctypes.byref(qp))
    if rc != 0 or not Path(dst).exists():
        raise OracleError(f"{src}: llama.cpp quantization to {ftype} failed (rc={rc})")
    return Path(dst)


def dequantized_twin(src: str | os.PathLike, dst: str | os.PathLike, *, nthread: int = 2) -> Path:
    """Write `src` with every tensor converted to F32 by llama.cpp's own dequantizer."""
    f32 = 0  # GGML_TYPE_F32
    return quantize(src, dst, "F32", nthread=nthread, pure=True, allow_requantize=True,
                    output_type=f32, token_embd_type=f32)
