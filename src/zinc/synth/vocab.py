"""Tokenizers for synthetic models: copied from a vocab GGUF, or built in (no files needed).

The built-in vocabularies are small but real: a byte-level BPE (`gpt2` model: 256 byte tokens in
the GPT-2 byte alphabet + merges learned from a fixed text), a SentencePiece vocabulary (`llama`
model: `<0xXX>` byte tokens + scored pieces, Gemma 3) or a Gemma 4 BPE (`gemma4` model: raw UTF-8
symbols with `▁`, `<0xXX>` byte fallback). Each family gets its special tokens (ChatML, Llama 3
headers, Gemma turns, harmony), its pre-tokenizer name, BOS/EOS ids and a short chat template.
When the vocabulary has the real size (e.g. 151,936) the special tokens sit at their real ids and
the remaining slots are filled with unique `[PAD{id}]` tokens; a tiny vocabulary (e.g. 512) keeps
small fixed ids (Gemma) and puts the others at the end.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

from zinc.gguf.constants import GGUFValueType as VT

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
ARR_STR, ARR_I32, ARR_F32 = (VT.ARRAY, VT.STRING), (VT.ARRAY, VT.INT32), (VT.ARRAY, VT.FLOAT32)

_TEXT = """The quick brown fox jumps over the lazy dog. A language model reads a sequence of tokens and
predicts the next one. Tokens are pieces of words, and common words such as the, and, of, to, in, is,
that, it, for, with, as, was, on, are, be, this, have, from, or, one, by, not, but, what, all, were,
when, we, there, can, an, your, which, their, said, if, do, will, each, about, how, up, out, them,
then, she, many, some, so, these, would, other, into, has, more, her, two, like, him, see, time,
could, no, make, than, first, been, its, who, now, people, my, made, over, did, down, only, way,
find, use, may, water, long, little, very, after, words, called, just, where, most, know get their
own token. Hello world! Hello, how are you today? I am fine, thank you. What is the capital of
France? The capital of France is Paris. Numbers: 0 1 2 3 4 5 6 7 8 9 10 42 100 2024 3.14159.
def main():
    print("hello world")
    for i in range(10):
        if i % 2 == 0:
            return i
The model writes its answer step by step, thinking about the question before it answers.
Large models are trained on many tokens of text; small models are useful for tests.
"""

_CHATML = ("{%- for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
           "'<|im_end|>' + '\\n' }}{%- endfor %}{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
           "{%- endif %}")
_LLAMA3 = ("{{ bos_token }}{%- for message in messages %}{{ '<|start_header_id|>' + message['role'] + "
           "'<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' }}{%- endfor %}"
           "{%- if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{%- endif %}")
_TURNS = ("{{ bos_token }}{%- for message in messages %}{%- set role = 'model' if message['role'] == 'assistant' "
          "else message['role'] %}{{ 'OPEN' + role + '\\n' + message['content'] | trim + 'CLOSE\\n' }}"
          "{%- endfor %}{%- if add_generation_prompt %}{{ 'OPENmodel\\n' }}{%- endif %}")
_HARMONY = ("{%- for message in messages %}{{ '<|start|>' + message['role'] + '<|message|>' + message['content'] + "
            "'<|end|>' }}{%- endfor %}{%- if add_generation_prompt %}{{ '<|start|>assistant' }}{%- endif %}")

_QWEN_SPECIALS = [("<|endoftext|>", CONTROL), ("<|im_start|>", CONTROL), ("<|im_end|>", CONTROL),
                  ("<|fim_prefix|>", CONTROL), ("<|fim_middle|>", CONTROL), ("<|fim_suffix|>", CONTROL),
                  ("<|fim_pad|>", CONTROL), ("<|repo_name|>", CONTROL), ("<|file_sep|>", CONTROL),
                  ("<tool_call>", USER_DEFINED), ("</tool_call>", USER_DEFINED), ("<think>", USER_DEFINED),
                  ("</think>", USER_DEFINED)]
_QWEN_IDS = [0, 1, 2, 16, 17, 18, 19, 20, 21, 14, 15, 24, 25]  # offsets from <|endoftext|>

# family → model, pre, specials [(text, type, fixed id)], bos/eos/pad/unk texts, flags, template,
#          reserved range (first id, last id, text format, type) filled at full size
FAMILIES: dict[str, dict] = {
    "qwen2": dict(model="gpt2", pre="qwen2", base=151643, bos="<|endoftext|>", eos="<|im_end|>",
                  pad="<|endoftext|>", add_bos=False, template=_CHATML,
                  reserved=(151643, 151935, "[PAD{id}]", USER_DEFINED)),
    "qwen35": dict(model="gpt2", pre="qwen35", base=248044, bos="<|endoftext|>", eos="<|im_end|>",
                   pad="<|endoftext|>", add_bos=False, template=_CHATML),
    "llama3": dict(model="gpt2", pre="llama-bpe", bos="<|begin_of_text|>", eos="<|eot_id|>", template=_LLAMA3,
                   specials=[("<|begin_of_text|>", CONTROL, 128000), ("<|end_of_text|>", CONTROL, 128001),
                             ("<|start_header_id|>", CONTROL, 128006), ("<|end_header_id|>", CONTROL, 128007),
                             ("<|eom_id|>", CONTROL, 128008), ("<|eot_id|>", CONTROL, 128009)],
                   reserved=(128000, 128255, "<|reserved_special_token_{n}|>", CONTROL)),
    "gpt-oss": dict(model="gpt2", pre="gpt-4o", bos="<|startoftext|>", eos="<|return|>", pad="<|endoftext|>",
                    template=_HARMONY,
                    specials=[("<|startoftext|>", CONTROL, 199998), ("<|endoftext|>", CONTROL, 199999),
                              ("<|return|>", CONTROL, 200002), ("<|constrain|>", CONTROL, 200003),
                              ("<|channel|>", CONTROL, 200005), ("<|start|>", CONTROL, 200006),
                              ("<|end|>", CONTROL, 200007), ("<|message|>", CONTROL, 200008),
                              ("<|call|>", CONTROL, 200012)],
                    reserved=(199998, 201087, "<|reserved_{id}|>", CONTROL)),
    "gemma3": dict(model="llama", pre="default", bos="<bos>", eos="<eos>", pad="<pad>", unk="<unk>",
                   add_bos=True, add_space_prefix=False,
                   template=_TURNS.replace("OPEN", "<start_of_turn>").replace("CLOSE", "<end_of_turn>"),
                   specials=[("<pad>", CONTROL, 0), ("<eos>", CONTROL, 1), ("<bos>", CONTROL, 2),
                             ("<unk>", UNKNOWN, 3), ("<mask>", CONTROL, 4), ("<start_of_turn>", CONTROL, 105),
                             ("<end_of_turn>", CONTROL, 106)],
                   reserved=(5, 104, "<unused{n}>", CONTROL)),
    "gemma4": dict(model="gemma4", pre="gemma4", bos="<bos>", eos="<eos>", pad="<pad>", unk="<unk>",
                   mask="<mask>", add_bos=True, add_space_prefix=False,
                   template=_TURNS.replace("OPEN", "<|turn>").replace("CLOSE", "<turn|>"),
                   specials=[("<pad>", CONTROL, 0), ("<eos>", CONTROL, 1), ("<bos>", CONTROL, 2),
                             ("<unk>", CONTROL, 3), ("<mask>", CONTROL, 4), ("<|tool>", CONTROL, 46),
                             ("<tool|>", CONTROL, 47), ("<|tool_call>", USER_DEFINED, 48),
                             ("<tool_call|>", USER_DEFINED, 49), ("<|tool_response>", USER_DEFINED, 50),
                             ("<tool_response|>", USER_DEFINED, 51), ('<|"|>', USER_DEFINED, 52),
                             ("<|think|>", CONTROL, 98), ("<|channel>", USER_DEFINED, 100),
                             ("<channel|>", USER_DEFINED, 101), ("<|turn>", CONTROL, 105),
                             ("<turn|>", CONTROL, 106)]),
}
for _fam in ("qwen2", "qwen35"):
    FAMILIES[_fam]["specials"] = [(t, ty, FAMILIES[_fam]["base"] + o) for (t, ty), o in zip(_QWEN_SPECIALS, _QWEN_IDS)]


@lru_cache(maxsize=1)
def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte → printable character table (printable bytes keep their code point)."""
    bs = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def _learn_merges(words: Counter, n_merges: int) -> list[tuple[str, str]]:
    """Plain BPE training: repeatedly merge the most frequent adjacent pair (ties: smallest pair)."""
    seqs = {w: list(w) for w in words}
    merges: list[tuple[str, str]] = []
    while len(merges) < n_merges:
        pairs: Counter = Counter()
        for w, syms in seqs.items():
            for a, b in zip(syms, syms[1:]):
                pairs[(a, b)] += words[w]
        if not pairs:
            break
        best = min(pairs, key=lambda pr: (-pairs[pr], pr))
        merges.append(best)
        for syms in seqs.values():
            i = 0
            while i < len(syms) - 1:
                if syms[i] == best[0] and syms[i + 1] == best[1]:
                    syms[i:i + 2] = [best[0] + best[1]]
                i += 1
    return merges


@lru_cache(maxsize=8)
def _body(model: str, n_max: int) -> tuple[tuple[tuple[str, int, float], ...], tuple[str, ...]]:
    """Ordinary tokens (text, type, score) and merges of a built-in vocabulary of ≤ n_max tokens."""
    if model == "gpt2":
        b2u = bytes_to_unicode()
        base = [(b2u[b], NORMAL, 0.0) for b in b2u]
        words = Counter("".join(b2u[b] for b in w.encode()) for w in
                        re.findall(r" ?[A-Za-z]+| ?[0-9]| ?[^\sA-Za-z0-9]+|\s+", _TEXT))
    elif model == "llama":
        base = [(f"<0x{b:02X}>", BYTE, 0.0) for b in range(256)]
        chars = sorted(set(_TEXT.replace("\n", " ").replace(" ", "▁")) | {"▁"})
        base += [(c, NORMAL, -1000.0 - i) for i, c in enumerate(chars)]
        words = Counter("▁" + w for w in _TEXT.split())
    else:  # gemma4: whole non-newline runs, spaces escaped
        base = [(f"<0x{b:02X}>", BYTE, 0.0) for b in range(256)] + [("\n", NORMAL, 0.0), ("\n\n", NORMAL, 0.0)]
        chars = sorted(set(_TEXT.replace("\n", "").replace(" ", "▁")))
        base += [(c, NORMAL, 0.0) for c in chars]
        words = Counter(line.replace(" ", "▁") for line in _TEXT.split("\n") if line)
    merges = _learn_merges(words, max(0, n_max - len(base)))
    known = {t for t, _, _ in base}
    toks = list(base)
    for i, (a, b) in enumerate(merges):
        if a + b not in known:
            known.add(a + b)
            toks.append((a + b, NORMAL, -float(i) if model == "llama" else 0.0))
    return tuple(toks[:n_max]), tuple(f"{a} {b}" for a, b in merges)


def _place_specials(fam: dict, n_vocab: int, slots: list) -> None:
    specials = fam.get("specials", [])
    fixed = [s for s in specials if s[2] < n_vocab]
    floating = [s for s in specials if s[2] >= n_vocab]
    for text, ty, i in fixed:
        slots[i] = (text, ty, 0.0)
    for k, (text, ty, _) in enumerate(floating):
        slots[n_vocab - len(floating) + k] = (text, ty, 0.0)
    lo, hi, fmt, ty = fam.get("reserved", (0, -1, "", 0))
    if hi < n_vocab and n_vocab > 4096 and not floating:  # real-size vocabulary: fill the reserved block
        n = 0
        for i in range(lo, hi + 1):
            if slots[i] is None:
                slots[i] = (fmt.format(id=i, n=n), ty, 0.0)
                n += 1


def builtin_vocab(family: str, n_vocab: int) -> dict[str, tuple[object, object]]:
    """`tokenizer.*` metadata of a built-in vocabulary with exactly ``n_vocab`` tokens."""
    fam = FAMILIES[family]
    slots: list = [None] * n_vocab
    _place_specials(fam, n_vocab, slots)
    n_free = slots.count(None)
    body, merges = _body(fam["model"], n_free)
    if len(body) < 256 + 2:
        raise ValueError(f"vocabulary of {n_vocab} tokens is too small for the {family} tokenizer")
    it = iter(body)
    for i in range(n_vocab):
        if slots[i] is None:
            slots[i] = next(it, None) or (f"[PAD{i}]", NORMAL, 0.0)
    tokens = [s[0] for s in slots]
    index = {t: i for i, t in enumerate(tokens)}
    kv: dict[str, tuple[object, object]] = {
        "tokenizer.ggml.model": (fam["model"], VT.STRING), "tokenizer.ggml.pre": (fam["pre"], VT.STRING),
        "tokenizer.ggml.tokens": (tokens, ARR_STR),
        "tokenizer.ggml.token_type": ([s[1] for s in slots], ARR_I32),
    }
    if fam["model"] != "gpt2":
        kv["tokenizer.ggml.scores"] = ([float(s[2]) for s in slots], ARR_F32)
    if fam["model"] != "llama":
        kv["tokenizer.ggml.merges"] = ([m for m in merges if m.replace(" ", "", 1) in index], ARR_STR)
    for key, field in (("bos", "bos"), ("eos", "eos"), ("padding", "pad"), ("unknown", "unk"), ("mask", "mask")):
        if field in fam:
            kv[f"tokenizer.ggml.{key}_token_id"] = (index[fam[field]], VT.UINT32)
    for key, field in (("add_bos_token", "add_bos"), ("add_space_prefix", "add_space_prefix")):
        if field in fam:
            kv[f"tokenizer.ggml.{key}"] = (bool(fam[field]), VT.BOOL)
    kv["tokenizer.chat_template"] = (fam["template"], VT.STRING)
    return kv


def vocab_from_file(path: str | Path) -> tuple[dict[str, tuple[object, object]], int]:
    """All `tokenizer.*` keys of a GGUF (with their exact value types) and its vocabulary size."""
    from zinc.gguf import GGUFFile

    with GGUFFile(path) as g:
        kv = {}
        for key, value in g.metadata.items():
            if key.startswith("tokenizer."):
                if hasattr(value, "copy"):
                    value = value.copy()
                kv[key] = (value, g.metadata_types[key])
    if "tokenizer.ggml.tokens" not in kv:
        raise ValueError(f"{path}: no tokenizer.ggml.tokens in this GGUF")
    return kv, len(kv["tokenizer.ggml.tokens"][0])
