"""The vocabulary read from GGUF `tokenizer.ggml.*` metadata, with llama.cpp's load-time rules.

`Vocab.from_metadata` reproduces `llama_vocab::impl::load` for the SPM (`llama`), byte-level BPE
(`gpt2`) and Gemma 4 (`gemma4`) tokenizer models: type defaults, pre-tokenizer flags, special ids
(with range checks), add_bos/add_eos overrides, token attributes (types, control-looking tokens
promoted to CONTROL, `unused` control tokens, gpt-oss harmony tokens), the end-of-generation set
and the special-token cache used to split special tokens out of the text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from zinc.errors import TokenizerError, UnsupportedModelError
from zinc.tokenizer.pretokenize import PRE_TYPES, PreType

# llama_token_attr bits (include/llama.h)
ATTR_UNDEFINED = 0
ATTR_UNKNOWN = 1 << 0
ATTR_UNUSED = 1 << 1
ATTR_NORMAL = 1 << 2
ATTR_CONTROL = 1 << 3
ATTR_USER_DEFINED = 1 << 4
ATTR_BYTE = 1 << 5

# tokenizer.ggml.token_type value -> attribute
_TYPE_TO_ATTR = {0: ATTR_UNDEFINED, 1: ATTR_NORMAL, 2: ATTR_UNKNOWN, 3: ATTR_CONTROL,
                 4: ATTR_USER_DEFINED, 5: ATTR_UNUSED, 6: ATTR_BYTE}

_EOT_TEXTS = ("<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
              "<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>",
              "<end_of_utterance>")
_EOM_TEXTS = ("<|eom_id|>",)
_FIM_TEXTS = {
    "fim_pre": ("<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>",
                "▁<PRE>", "<|code_prefix|>", "<|prefix|>"),
    "fim_suf": ("<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>",
                "▁<SUF>", "<|code_suffix|>", "<|suffix|>"),
    "fim_mid": ("<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>",
                "▁<MID>", "<|code_middle|>", "<|middle|>"),
    "fim_pad": ("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"),
    "fim_rep": ("<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"),
    "fim_sep": ("<|file_sep|>",),
}
_EOG_TEXTS = frozenset((
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<｜end▁of▁sentence｜>", "[e~[",
))
_HARMONY_USER_DEFINED = ("<|channel|>", "<|message|>", "<|start|>", "<|constrain|>")

# GGUF key suffix (tokenizer.ggml.<suffix>) -> special id name; later keys may override earlier.
_SPECIAL_KEYS = (
    ("bos_token_id", "bos"), ("eos_token_id", "eos"), ("eot_token_id", "eot"),
    ("eom_token_id", "eom"), ("unknown_token_id", "unk"), ("seperator_token_id", "sep"),
    ("padding_token_id", "pad"), ("mask_token_id", "mask"),
    ("fim_pre_token_id", "fim_pre"), ("fim_suf_token_id", "fim_suf"),
    ("fim_mid_token_id", "fim_mid"), ("fim_pad_token_id", "fim_pad"),
    ("fim_rep_token_id", "fim_rep"), ("fim_sep_token_id", "fim_sep"),
    ("prefix_token_id", "fim_pre"), ("suffix_token_id", "fim_suf"),
    ("middle_token_id", "fim_mid"),
)

SPM, BPE = "SPM", "BPE"


@dataclass
class Vocab:
    """Everything the encoders and the decoder need to know about a vocabulary."""

    source: str
    model: str  # tokenizer.ggml.model
    type: str  # SPM or BPE
    pre: PreType | None  # BPE pre-tokenizer (None for SPM)
    tokens: list[str]
    token_to_id: dict[str, int]
    scores: list[float]
    attrs: list[int]
    merges: list[str]
    special: dict[str, int | None]
    add_bos: bool
    add_eos: bool
    add_space_prefix: bool
    clean_spaces: bool
    escape_whitespaces: bool
    ignore_merges: bool
    eog_ids: frozenset[int] = frozenset()
    special_cache: list[int] = field(default_factory=list)

    @property
    def n_vocab(self) -> int:
        return len(self.tokens)

    @classmethod
    def from_metadata(cls, md: dict[str, Any], source: str = "") -> "Vocab":
        model = md.get("tokenizer.ggml.model")
        if model is None:
            raise TokenizerError(f"{source}: no tokenizer.ggml.model key (no vocabulary)")
        pre_name = md.get("tokenizer.ggml.pre") or ""
        v = _base_vocab(md, model, pre_name, source)
        _load_tokens(v, md)
        _load_special_ids(v, md)
        _promote_and_eog(v)
        special = ATTR_CONTROL | ATTR_USER_DEFINED | ATTR_UNKNOWN
        v.special_cache = sorted(  # longest text (in bytes) first; stable: equal lengths by id
            (i for i, a in enumerate(v.attrs) if a & special),
            key=lambda i: -len(v.tokens[i].encode("utf-8", "surrogateescape")),
        )
        return v


def _base_vocab(md: dict[str, Any], model: str, pre_name: str, source: str) -> Vocab:
    """Type defaults and pre-tokenizer flags (the first block of llama.cpp's load)."""
    special: dict[str, int | None] = {k: None for _, k in _SPECIAL_KEYS}
    merges: list[str] = []
    if model == "llama":
        vtype, pre = SPM, None
        special.update(bos=1, eos=2, unk=0)
    elif model in ("gpt2", "gemma4"):
        vtype = BPE
        merges = md.get("tokenizer.ggml.merges")
        if not isinstance(merges, list):
            raise TokenizerError(
                f"{source}: tokenizer.ggml.merges is missing or not a string array")
        if model == "gpt2":
            special.update(bos=11, eos=11)
        else:
            pre_name = "gemma4"
        if not pre_name:
            pre_name = "default"
        pre = PRE_TYPES.get(pre_name)
        if pre is None:
            raise UnsupportedModelError(
                f"{source}: unsupported pre-tokenizer tokenizer.ggml.pre={pre_name!r} "
                f"(supported: {', '.join(sorted(PRE_TYPES))})")
    else:
        raise UnsupportedModelError(
            f"{source}: unsupported tokenizer model tokenizer.ggml.model={model!r} "
            "(supported: llama, gpt2, gemma4)")
    if vtype == SPM:
        add_space_prefix, clean_spaces, add_bos, ignore, esc = True, False, True, False, False
    else:
        add_space_prefix, esc = False, pre.escape_whitespaces
        clean_spaces, ignore = pre.clean_spaces, pre.ignore_merges
        add_bos = bool(pre.add_bos)
    add_space_prefix = bool(md.get("tokenizer.ggml.add_space_prefix", add_space_prefix))
    return Vocab(source=source, model=model, type=vtype, pre=pre, tokens=[], token_to_id={},
                 scores=[], attrs=[], merges=merges, special=special, add_bos=add_bos,
                 add_eos=False, add_space_prefix=add_space_prefix, clean_spaces=clean_spaces,
                 escape_whitespaces=esc, ignore_merges=ignore)


def _load_tokens(v: Vocab, md: dict[str, Any]) -> None:
    tokens = md.get("tokenizer.ggml.tokens")
    if not isinstance(tokens, list):
        raise TokenizerError(f"{v.source}: tokenizer.ggml.tokens is missing or not a string array")
    n = len(tokens)
    scores = md.get("tokenizer.ggml.scores")
    types = md.get("tokenizer.ggml.token_type")
    if scores is not None and len(scores) < n:
        raise TokenizerError(f"{v.source}: tokenizer.ggml.scores has {len(scores)} < {n} entries")
    if types is not None and len(types) < n:
        raise TokenizerError(
            f"{v.source}: tokenizer.ggml.token_type has {len(types)} < {n} entries")
    v.tokens = [t if t else f"[EMPTY_{i}]" for i, t in enumerate(tokens)]
    v.token_to_id = {t: i for i, t in enumerate(v.tokens)}  # duplicates: the last id wins
    v.scores = [float(s) for s in _as_list(scores)[:n]] if scores is not None else [0.0] * n
    if types is not None:
        v.attrs = [_TYPE_TO_ATTR.get(int(t), ATTR_UNDEFINED) for t in _as_list(types)[:n]]
    else:
        v.attrs = [ATTR_NORMAL] * n


def _as_list(arr: Any) -> list:
    return arr.tolist() if hasattr(arr, "tolist") else list(arr)


def _load_special_ids(v: Vocab, md: dict[str, Any]) -> None:
    n = v.n_vocab
    for suffix, name in _SPECIAL_KEYS:
        cur = v.special[name]
        if cur is not None and cur >= n:
            v.special[name] = cur = None
        new = md.get(f"tokenizer.ggml.{suffix}")
        if new is None:
            continue
        if 0 <= int(new) < n:
            v.special[name] = int(new)
    for key, attr in (("add_bos_token", "add_bos"), ("add_eos_token", "add_eos")):
        val = md.get(f"tokenizer.ggml.{key}")
        if val is not None:
            setattr(v, attr, bool(val))
    if v.pre is not None and v.pre.name == "GEMMA4" and not v.add_bos:
        v.add_bos = True


def _first_present(v: Vocab, texts: tuple[str, ...]) -> int | None:
    """The id of the first candidate text present, in list order (llama.cpp takes the first in
    its hash-map order, which in practice picks e.g. <|im_end|> over <|endoftext|> too)."""
    for t in texts:
        if t in v.token_to_id:
            return v.token_to_id[t]
    return None


def _promote_and_eog(v: Vocab) -> None:
    """Control-looking tokens become CONTROL; unused/harmony fixes; the end-of-generation set."""
    sp, attrs, t2i = v.special, v.attrs, v.token_to_id
    auto = [("eot", _EOT_TEXTS), ("eom", _EOM_TEXTS)] + list(_FIM_TEXTS.items())
    for name, texts in auto:
        if sp[name] is None:
            found = _first_present(v, texts)
            if found is not None:
                sp[name] = found
                attrs[found] |= ATTR_CONTROL
    for tid in set(t2i.values()):
        if attrs[tid] & ATTR_CONTROL and "unused" in v.tokens[tid]:
            attrs[tid] |= ATTR_UNUSED
    eog: set[int] = {sp[k] for k in ("fim_pad", "fim_rep", "fim_sep") if sp[k] is not None}
    for text in _EOG_TEXTS:
        tid = t2i.get(text)
        if tid is not None:
            eog.add(tid)
            attrs[tid] |= ATTR_CONTROL
    for text in _HARMONY_USER_DEFINED:
        tid = t2i.get(text)
        if tid is not None:
            attrs[tid] = ATTR_USER_DEFINED
    for k in ("eos", "eot", "eom"):
        if sp[k] is not None:
            eog.add(sp[k])
    texts = {v.tokens[t]: t for t in eog if 0 <= t < v.n_vocab}
    has = lambda s: s in texts  # noqa: E731
    if has("<|end|>") and ((has("<|return|>") and (has("<|call|>") or has("<|calls|>")))
                           or ((has("<|call|>") or has("<|calls|>")) and has("<|flush|>"))):
        end_id = texts["<|end|>"]
        eog.discard(end_id)
        attrs[end_id] = ATTR_USER_DEFINED
    if ("<|tool_response>" in texts or "<|plamo:eos|>" in texts) and "</s>" in texts:
        eog.discard(texts["</s>"])
        attrs[texts["</s>"]] = ATTR_NORMAL
    v.eog_ids = frozenset(eog)
