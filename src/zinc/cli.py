"""The `zinc` command. The only module that reads environment variables.

Implemented so far: `zinc inspect FILE` (GGUF metadata and tensor table) and `zinc --version`.
`run`, `serve`, `chat`, `bench`, `model` and `--check` arrive with the engine and server.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from zinc import __version__

NOT_YET = {
    "run": "text generation (`zinc run`)",
    "serve": "the OpenAI-compatible server (`zinc serve`)",
    "chat": "the server and browser chat UI (`zinc chat`)",
    "bench": "benchmarks (`zinc bench`)",
    "model": "the managed model catalog (`zinc model`)",
}


def _short(value, limit: int = 8) -> str:
    if isinstance(value, np.ndarray):
        head = ", ".join(str(v) for v in value[:limit].tolist())
        return f"[{head}{', ...' if len(value) > limit else ''}] ({value.dtype}, {len(value)})"
    if isinstance(value, list):
        head = ", ".join(repr(v) for v in value[:limit])
        return f"[{head}{', ...' if len(value) > limit else ''}] ({len(value)} items)"
    if isinstance(value, str) and len(value) > 200:
        return repr(value[:200]) + f"... ({len(value)} chars)"
    return repr(value)


def cmd_inspect(args: argparse.Namespace) -> int:
    from zinc.gguf import GGUFFile

    with GGUFFile(args.file) as f:
        if args.json:
            out = {
                "path": str(f.path), "version": f.version, "alignment": f.alignment,
                "metadata": {k: _short(v) for k, v in f.metadata.items()},
                "tensors": [{"name": t.name, "type": t.ggml_type.name, "shape": list(t.shape),
                             "ne": list(t.ne), "offset": t.offset, "nbytes": t.nbytes} for t in f.tensors.values()],
            }
            print(json.dumps(out, indent=1))
            return 0
        print(f"{f.path}: GGUF v{f.version}, alignment {f.alignment}, {len(f.metadata)} keys, {len(f.tensors)} tensors")
        for k, v in f.metadata.items():
            print(f"  {k} = {_short(v)}")
        total = 0
        for t in f.tensors.values():
            total += t.nbytes
            print(f"  {t.name:48s} {t.ggml_type.name:7s} {str(list(t.shape)):24s} {t.nbytes / 2**20:10.2f} MiB")
        print(f"  total tensor data: {total / 2**30:.3f} GiB")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="zinc", description="Local LLM inference for GGUF models.")
    ap.add_argument("--version", action="version", version=f"zinc {__version__}")
    sub = ap.add_subparsers(dest="cmd")
    p = sub.add_parser("inspect", help="show a GGUF file's metadata and tensors")
    p.add_argument("file")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_inspect)
    for name, what in NOT_YET.items():
        sp = sub.add_parser(name, help=f"{what}: not implemented yet")
        sp.add_argument("rest", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    if args.cmd is None:
        ap.print_help()
        return 0
    if args.cmd in NOT_YET:
        print(f"zinc: {NOT_YET[args.cmd]} is not implemented yet in zinc {__version__}. "
              "Available now: `zinc inspect FILE.gguf`, `python -m zinc.synth`.", file=sys.stderr)
        return 2
    from zinc.errors import ZincError

    try:
        return args.func(args)
    except ZincError as e:
        print(f"zinc: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
