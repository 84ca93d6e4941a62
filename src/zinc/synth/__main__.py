"""`python -m zinc.synth PRESET -o out.gguf [--ftype Q4_K_M] [--seed N] [--vocab PATH|auto|builtin] [--list]`."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from zinc.synth.build import plan, write_model
from zinc.synth.presets import PRESETS, Preset, get_preset
from zinc.synth.quantmix import FTYPES

# where `--vocab auto` looks for the preset's ggml-vocab-*.gguf: the project's ../shared folder
_VOCAB_DIRS = [Path(__file__).resolve().parents[3].parent / "shared" / "data" / "vocab"]


def _shape_line(p: Preset) -> str:
    moe = f" E={p.n_expert}/{p.n_expert_used} Fe={p.n_ff_exp}" if p.n_expert else ""
    ssm = f" dn={p.ssm_groups}/{p.ssm_v_heads}x{p.ssm_state}" if p.ssm_v_heads else ""
    swa = f" swa={p.n_swa}/{p.swa_period}" if p.n_swa else ""
    return (f"{p.arch:<9} L={p.n_layer:<3} D={p.n_embd:<5} H={p.n_head}/{p.n_head_kv}x{p.head_dim} "
            f"F={p.n_ff}{moe}{ssm}{swa} V={p.n_vocab}{' tied' if p.tied else ''}")


def list_presets(ftype: str) -> None:
    """Print every preset: shape, parameter count and size at ``ftype``."""
    print(f"{'preset':<16} {'params':>9} {ftype + ' size':>14}  shape")
    for name, p in PRESETS.items():
        planned = plan(p, ftype)
        n = sum(t.spec.n_elements for t in planned)
        size = sum(t.nbytes for t in planned)
        print(f"{name:<16} {n / 1e9:>8.3f}B {size / 2**30:>10.2f} GiB  {_shape_line(p)}")


def resolve_vocab(arg: str, p: Preset) -> Path | None:
    """``auto``: the preset's vocab GGUF if it can be found, else the built-in vocab; ``builtin``: None."""
    if arg == "builtin":
        return None
    if arg != "auto":
        return Path(arg)
    if p.tiny or not p.vocab_file:
        return None
    for d in _VOCAB_DIRS:
        if (d / p.vocab_file).is_file():
            return d / p.vocab_file
    return None


def _progress(t0: float):
    def report(i: int, n: int, name: str, done: int) -> None:
        rate = done / 2**20 / max(time.perf_counter() - t0, 1e-9)
        end = "\n" if i == n else ""
        sys.stderr.write(f"\r[{i}/{n}] {done / 2**20:9.1f} MiB  {rate:7.1f} MiB/s  {name:<40.40}{end}")
        sys.stderr.flush()
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m zinc.synth", description=__doc__)
    ap.add_argument("preset", nargs="?", help="preset name (see --list)")
    ap.add_argument("-o", "--output", help="output .gguf path")
    ap.add_argument("--ftype", default="Q4_K_M", help=f"file type: {', '.join(FTYPES)}")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--vocab", default="auto", help="vocab GGUF to copy the tokenizer from, 'auto' or 'builtin'")
    ap.add_argument("--from-f32", action="store_true", default=None,
                    help="quantize Gaussian values instead of writing random blocks (default for tiny presets)")
    ap.add_argument("--list", action="store_true", help="list presets with parameter counts and sizes")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    a = ap.parse_args(argv)
    if a.list:
        list_presets(a.ftype.upper())
        return 0
    if not a.preset or not a.output:
        ap.error("PRESET and -o are required (or --list)")
    try:
        p = get_preset(a.preset)
    except KeyError as e:
        ap.error(str(e.args[0]))
    vocab = resolve_vocab(a.vocab, p)
    t0 = time.perf_counter()
    res = write_model(a.output, p, ftype=a.ftype, seed=a.seed, vocab=vocab, from_f32=a.from_f32,
                      progress=None if a.quiet else _progress(t0))
    print(res.summary() + (f" [vocab {vocab}]" if vocab else " [built-in vocab]"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
