"""Deterministic stress corpus for tokenizer parity tests.

`generate(n, seed, specials)` returns `n` strings mixing: text in many scripts, emoji with skin
tones / ZWJ sequences / flags / keycaps, combining marks, whitespace runs (\\n \\t \\r, NBSP,
ideographic and other Unicode spaces, VT/FF/NEL), digit runs (ASCII and other scripts), code,
special-token look-alikes and real special tokens (`specials`), long words, apostrophe
contractions, control characters, noncharacters, private-use, unassigned code points and code
points assigned only after Unicode 15.1. Lone surrogates are never produced (not valid text).
"""

from __future__ import annotations

import random

# (first, last) code point ranges of letters in various scripts
SCRIPTS = {
    "latin": [(0x41, 0x5A), (0x61, 0x7A)],
    "latin_ext": [(0xC0, 0xFF), (0x100, 0x17F), (0x1E00, 0x1EFF)],
    "greek": [(0x391, 0x3A9), (0x3B1, 0x3C9)],
    "cyrillic": [(0x410, 0x44F)],
    "armenian": [(0x531, 0x556), (0x561, 0x586)],
    "hebrew": [(0x5D0, 0x5EA)],
    "arabic": [(0x621, 0x64A)],
    "devanagari": [(0x905, 0x939), (0x93E, 0x94D)],
    "bengali": [(0x985, 0x9B9), (0x9BE, 0x9CD)],
    "tamil": [(0xB85, 0xBB9), (0xBBE, 0xBCD)],
    "thai": [(0xE01, 0xE30), (0xE31, 0xE3A)],
    "georgian": [(0x10D0, 0x10FA)],
    "ethiopic": [(0x1200, 0x135A)],
    "hangul": [(0xAC00, 0xD7A3)],
    "hiragana": [(0x3041, 0x3096)],
    "katakana": [(0x30A1, 0x30FA)],
    "cjk": [(0x4E00, 0x9FFF)],
    "cjk_ext": [(0x20000, 0x2A6DF), (0x2EBF0, 0x2EE5D)],  # ext B, ext I (Unicode 15.1)
    "math_alnum": [(0x1D400, 0x1D7FF)],
    "fullwidth": [(0xFF21, 0xFF3A), (0xFF41, 0xFF5A)],
}
COMBINING = [(0x300, 0x36F), (0x483, 0x489), (0x591, 0x5BD), (0x64B, 0x65F), (0x900, 0x903),
             (0x93A, 0x94F), (0xE31, 0xE31), (0xE34, 0xE3A), (0x1AB0, 0x1ACE), (0x20D0, 0x20F0),
             (0xFE20, 0xFE2F)]
DIGITS = ["0123456789", "٠١٢٣٤٥٦٧٨٩", "०१२३४५६७८९", "０１２３４５６７８９", "¹²³⁴⁵⁶⁷⁸⁹⁰",
          "½¼¾⅓", "ⅠⅡⅢⅣⅫ", "①②③", "𝟎𝟏𝟐𝟑"]
SPACES = [" ", " ", " ", "  ", "\t", "\n", "\n", "\r", "\r\n", "\n\n", "\u00a0", "\u3000",
          "\u2028", "\u2029", "\u2009", "\u200a", "\u202f", "\u205f", "\u1680", "\x0b", "\x0c",
          "\x85", "\x1c", "\x1f", "\u200b", "\ufeff"]
EMOJI = ["🦙", "😀", "👍", "🎉", "🔥", "❤", "❤️", "✨", "🚀", "🐍", "🤖", "☃", "⚡", "🧪", "🫠"]
SKIN = ["\U0001F3FB", "\U0001F3FC", "\U0001F3FD", "\U0001F3FE", "\U0001F3FF"]
ZWJ_SEQ = ["👨\u200d👩\u200d👧\u200d👦", "👩\u200d💻", "🏳️\u200d🌈", "🧑🏽\u200d🚀",
           "👁️\u200d🗨️", "❤️\u200d🔥"]
ODD = ["\ufffd", "\ufffe", "\uffff", "\ue000", "\U000F0000", "\U0010FFFD", "\u0378", "\u0000",
       "\x7f", "\x01", "\x1b", "\x80", "\x9f", "\u200c", "\u200d", "\u200e", "\u202e", "\u2066",
       "\U0001E4D0", "\U0001E4E8", "\U00011F00", "\U0001D2C0",  # Unicode 15.0 letters / numbers
       "\U00010D40", "\U00010D50", "\U000105C0", "\U0001CC00", "\U00016D40",  # 16.0 (undefined)
       "\U000E0041", "\U000E0001", "\u00ad", "\u061c", "\u180e"]
LOOKALIKES = ["<|im_end", "<|im_end|", "<|im_end|>x", "<<|im_start|>>", "<|im_start|>user\n",
              "</s", "<s>", "</s>", "<0x0A>", "<0x41>", "<unk>", "<unused12>", "[INST]", "<pad>",
              "<start_of_turn>", "<end_of_turn>", "<|endoftext|>", "<|eot_id|>",
              "<|begin_of_text|>",
              "<bos>", "<eos>", "<think>", "</think>", "<tool_call>", "<|channel|>", "<|turn>",
              "<|", "|>", "<", ">", "<<>>", "<|fim_prefix|>", "<mask>", "[multimodal]"]
CONTRACTIONS = ["don't", "I'M", "we'RE", "they've", "it's", "'s", "'ll've", "rock'n'roll",
                "she'd", "O'Neil", "'T", "'Ll", "y'all", "can’t", "' s", "''", "'''", "'re'", "x'",
                "l'été", "dell'anno"]
CODE = [
    "def {a}({b}, *args, **kw):\n    return {b} + {n}  # {w}\n",
    "for (int {a} = 0; {a} < {n}; ++{a}) {{\n\t{b}[{a}] = {a} * 2;\n}}\n",
    '{{"{a}": [{n}, "{w}", null, true], "{b}": {{"x": -{n}.5e10}}}}',
    "<div class=\"{a}\">{w}</div>\n<script>let {b} = `${{{a}}}`;</script>",
    "if [ -z \"${a}\" ]; then echo '{w}' | grep -E '^[0-9]{{3}}$' >> /tmp/{b}.log; fi",
    "SELECT {a}, COUNT(*) FROM {b} WHERE x >= {n} GROUP BY 1;\n",
    "    {a} = lambda {b}: {b} ** {n} if {b} != 0 else None\n\n\n",
    "https://example.com/{a}/{b}?q={w}&n={n}#frag",
    "x={n};y=0x{n:X};z=0b101;w=1_000_000;v=3.14159e-10;",
]
WORDS = ["hello", "world", "The", "quick", "brown", "fox", "naïve", "café", "Straße", "ÆØÅ",
         "привет", "мир", "γειά", "こんにちは", "世界", "안녕하세요", "مرحبا", "שלום", "नमस्ते",
         "สวัสดี", "ሰላም", "გამარჯობა", "ÄPFEL", "İstanbul", "ǅemal", "ﬁnance", "Ⅻ", "µ"]


class _Gen:
    def __init__(self, rng: random.Random, specials: list[str]) -> None:
        self.r = rng
        self.specials = specials

    def cp(self, ranges) -> str:
        a, b = self.r.choice(ranges)
        return chr(self.r.randint(a, b))

    def word(self) -> str:
        r = self.r
        if r.random() < 0.4:
            return r.choice(WORDS)
        script = SCRIPTS[r.choice(list(SCRIPTS))]
        return "".join(self.cp(script) for _ in range(r.randint(1, 9)))

    def sep(self) -> str:
        r = self.r
        return r.choice(SPACES) if r.random() < 0.3 else r.choice([" ", " ", ", ", ". ", "! ", "?",
                                                                   "-", "/", ":", "; ", "...",
                                                                   "—", "«", "»", "“", "”"])

    def prose(self) -> str:
        return "".join(self.word() + self.sep() for _ in range(self.r.randint(1, 12)))

    def emoji(self) -> str:
        r = self.r
        parts = []
        for _ in range(r.randint(1, 5)):
            k = r.random()
            if k < 0.3:
                parts.append(r.choice(EMOJI) + (r.choice(SKIN) if r.random() < 0.5 else ""))
            elif k < 0.55:
                parts.append(r.choice(ZWJ_SEQ))
            elif k < 0.75:
                parts.append(chr(0x1F1E6 + r.randint(0, 25)) + chr(0x1F1E6 + r.randint(0, 25)))
            elif k < 0.85:
                parts.append(r.choice("0123456789#*") + "\ufe0f\u20e3")
            else:
                parts.append(chr(r.randint(0x1F300, 0x1FAFF)))
            if r.random() < 0.4:
                parts.append(r.choice(SPACES))
        return "".join(parts)

    def combining(self) -> str:
        r = self.r
        out = []
        for _ in range(r.randint(1, 8)):
            base = self.cp(SCRIPTS[r.choice(["latin", "greek", "cyrillic", "devanagari", "thai",
                                             "arabic", "hebrew"])]) if r.random() < 0.85 else " "
            out.append(base + "".join(self.cp(COMBINING) for _ in range(r.randint(0, 4))))
            if r.random() < 0.3:
                out.append(" ")
        return "".join(out)

    def whitespace(self) -> str:
        r = self.r
        out = []
        for _ in range(r.randint(1, 8)):
            out.append("".join(r.choice(SPACES) for _ in range(r.randint(1, 6))))
            if r.random() < 0.7:
                out.append(r.choice([self.word(), "x", "!", "1", "'s", "-", "\u0301"]))
        return "".join(out)

    def digits(self) -> str:
        r = self.r
        out = []
        for _ in range(r.randint(1, 5)):
            alphabet = DIGITS[0] if r.random() < 0.6 else r.choice(DIGITS)
            out.append("".join(r.choice(alphabet) for _ in range(r.randint(1, 30))))
            out.append(r.choice(["", " ", ".", ",", "-", "x", "e", " $", "%", "\n", "٫"]))
        return "".join(out)

    def code(self) -> str:
        r = self.r
        tpl = r.choice(CODE)
        text = tpl.format(a=r.choice(["i", "foo_bar", "ΔT", "x1", "_"]),
                          b=r.choice(["data", "self", "Ærø", "arr", "__init__"]),
                          n=r.randint(0, 10**r.randint(1, 12)), w=self.word())
        return " " * r.choice([0, 0, 2, 4, 8]) + text

    def special(self) -> str:
        r = self.r
        pool = LOOKALIKES + self.specials if self.specials else LOOKALIKES
        out = []
        for _ in range(r.randint(1, 6)):
            tok = r.choice(pool)
            if r.random() < 0.2 and len(tok) > 2:
                cut = r.randint(1, len(tok) - 1)
                tok = tok[:cut] if r.random() < 0.5 else tok[cut:]
            out.append(tok)
            out.append(r.choice(["", "", " ", "\n", "hi", " there ", "x", "'s"]))
        return "".join(out)

    def long_word(self) -> str:
        r = self.r
        k = r.random()
        n = r.randint(40, 1500)
        if k < 0.25:
            return r.choice("aZ0 \n-=!é世") * n
        if k < 0.5:
            unit = self.word()
            return unit * max(1, n // max(1, len(unit)))
        if k < 0.75:
            alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
            return "".join(r.choice(alpha) for _ in range(n)) + "=="
        return "".join(self.cp(SCRIPTS[r.choice(list(SCRIPTS))]) for _ in range(n // 4))

    def contractions(self) -> str:
        r = self.r
        return "".join(r.choice(CONTRACTIONS) + r.choice([" ", "", "\n", "'", "s", " 's"])
                       for _ in range(r.randint(1, 8)))

    def odd(self) -> str:
        r = self.r
        out = []
        for _ in range(r.randint(1, 8)):
            k = r.random()
            if k < 0.5:
                out.append(r.choice(ODD))
            elif k < 0.8:
                out.append(_random_codepoint(r))
            else:
                out.append(self.word())
        return "".join(out)

    def mixture(self) -> str:
        parts = [self.r.choice(KINDS)(self) for _ in range(self.r.randint(2, 5))]
        return "".join(parts)


def _random_codepoint(r: random.Random) -> str:
    while True:
        cp = r.choice([r.randint(0, 0x7FF), r.randint(0x800, 0xFFFF), r.randint(0x10000, 0x10FFFF),
                       r.randint(0x10000, 0x3FFFF)])
        if not 0xD800 <= cp <= 0xDFFF:
            return chr(cp)


KINDS = [_Gen.prose, _Gen.emoji, _Gen.combining, _Gen.whitespace, _Gen.digits, _Gen.code,
         _Gen.special, _Gen.long_word, _Gen.contractions, _Gen.odd]
_WEIGHTS = [3, 1, 1, 2, 1, 2, 2, 1, 1, 1]


def generate(n: int, seed: int = 0, specials: list[str] | tuple[str, ...] = ()) -> list[str]:
    """`n` deterministic test strings (same n, seed and specials -> same list)."""
    rng = random.Random(seed)
    g = _Gen(rng, list(specials))
    kinds = KINDS + [_Gen.mixture]
    weights = _WEIGHTS + [4]
    out = []
    for _ in range(n):
        text = rng.choices(kinds, weights)[0](g)
        if rng.random() < 0.05:
            text = text.strip()
        out.append(text)
    return out
