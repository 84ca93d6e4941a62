"""`zinc bench`: llama-bench style prompt-processing (pp) and generation (tg) speed of a model.

    res = run_bench(model, n_prompt=[512], n_gen=[128], depths=[0], repetitions=3)
    print(format_table(res)); json.dumps(res)

Correctness first: `verify(model)` runs a short random sequence the way the engine does (a prompt
chunk, then one token at a time, in a fresh cache) and compares every position's logits with the
teacher-forced `model.logits`; a mismatch stops the benchmark (`BenchError`). A model with routed
experts that fails on a backend's default numerics is checked again on its exact ones (`_verify_exact`).

Then, per test and repetition (after two untimed warm-up runs per test: compilation, and the CUDA
backend captures a prompt-chunk graph when a chunk length comes again):
* ``pp{P}`` — P random tokens prefilled into an empty cache (in `n_ubatch` chunks): P / seconds;
* ``tg{N}`` — N tokens decoded one at a time, each the argmax of the previous step: N / seconds;
* with a depth D the cache first holds D random tokens (untimed) and the names get ``@d{D}``;
* ``tg{N}x{B}`` (``parallel``) — B sequences, each after its own prompt of ``parallel_prompt`` random
  tokens (untimed), decode N tokens together greedily, one step a token for all of them (`Model.greedy_seqs`:
  on the device where the backend can): B N / seconds, every sequence's tokens counted (llama-batched-bench's
  generation speed); its steps (`Model.forward_seqs`) checked first by `verify_seqs`.
Results are the mean and sample standard deviation of the repetitions' tok/s, as llama-bench
reports them; a tg test also gets the bytes a step reads (`decode_bytes`) and so the memory
bandwidth it reached (GB/s). Progress goes to the `log` callback (stderr in the CLI).
"""

from __future__ import annotations

import datetime as _dt
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from zinc.errors import ZincError
from zinc.testing.compare import mean_kl

WARMUP_RUNS = 2
VERIFY_TOKENS = 8
# Stepwise against teacher-forced logits: max |difference| over max |teacher-forced|, and the mean KL
# divergence of their softmaxes. The CUDA decode matvecs run on 8-bit activations (as llama.cpp's do)
# while its prefill GEMMs run on f16 ones: on the random-weight Qwen3-8B shape the two paths differ by
# max 0.06 and mean KL 3e-3 (a wrong step, e.g. a missing KV write, gives O(1)).
VERIFY_RTOL = 0.1
VERIFY_KL = 1e-2


class BenchError(ZincError):
    """The model failed the correctness check, or a benchmark setting is invalid."""


def synth_preset(metadata: dict[str, Any]) -> str | None:
    """The `zinc.synth` preset a file was written from (its general.name is "zinc-synth PRESET")."""
    name = metadata.get("general.name")
    if isinstance(name, str) and name.startswith("zinc-synth "):
        return name[len("zinc-synth "):].strip() or None
    return None


def quant_name(model: Any) -> str:
    """The file type (general.file_type, e.g. "Q4_K_M"), else the weight type holding the most bytes."""
    from zinc.synth.quantmix import FTYPES

    names = {v: k for k, (v, _) in reversed(list(FTYPES.items()))}
    ftype = model.metadata.get("general.file_type")
    if ftype is not None and int(ftype) in names:
        return names[int(ftype)]
    mix: Counter = Counter()
    for t in model.gguf.tensors.values():
        mix[t.ggml_type.name] += t.nbytes
    return mix.most_common(1)[0][0] if mix else "unknown"


def decode_bytes(model: Any, depth: int, n_gen: int) -> int:
    """The bytes a decode step of tg{n_gen}@d{depth} reads, on average over the run: every weight once (an
    embedding table one row, unless it is also the output head; a stack of routed experts the n_expert_used /
    n_expert of it that one token selects), each attention layer's cells up to the step's position (within its
    window), and each recurrent layer's state read and written. Activations and logits are left out."""
    from zinc.engine.cache import RecurrentCacheSpec
    from zinc.options import KV_BYTES

    cfg, tensors = model.config, model.gguf.tensors
    total = 0.0
    for name, t in tensors.items():
        if name.endswith("token_embd.weight") and not (name == "token_embd.weight" and "output.weight" not in tensors):
            total += t.nbytes / max(1, t.shape[0])  # one row (token_embd, Gemma 4's per_layer_token_embd)
        elif "_exps." in name and cfg.n_expert:
            total += t.nbytes * cfg.n_expert_used / cfg.n_expert
        else:
            total += t.nbytes
    layout = model.arch.cache_layout(cfg)
    item = KV_BYTES[model.ops.kv_dtype]
    positions = np.arange(depth, depth + n_gen) + 1  # cells up to and including each step's own
    for il, spec in enumerate(layout):
        spec = spec if spec is not None else layout[cfg.kv_layer(il)]  # a layer reading an earlier one's cells
        if isinstance(spec, RecurrentCacheSpec):
            total += 2 * spec.nbytes
        elif spec is not None:
            cells = np.minimum(positions, spec.window) if spec.window > 0 else positions
            total += spec.n_head_kv * (spec.head_dim_k + spec.head_dim_v) * item * float(np.mean(cells))
    return int(total)


def _rand_tokens(rng: np.random.Generator, n_vocab: int, n: int) -> list[int]:
    return [int(t) for t in rng.integers(0, n_vocab, size=n)]


def verify(model: Any, n_tokens: int = VERIFY_TOKENS, seed: int = 0) -> dict[str, Any]:
    """Stepwise (chunk + single-token decode) logits against `model.logits`; BenchError on mismatch."""
    ids = _rand_tokens(np.random.default_rng(seed), model.n_vocab, n_tokens)
    ref = np.asarray(model.logits(ids), np.float64)
    cache = model.new_cache(n_tokens)
    half = max(1, n_tokens // 2)
    got = [np.asarray(model.forward(ids[:half], cache), np.float64)]
    for t in ids[half:]:
        got.append(np.asarray(model.forward([t], cache, last_only=True), np.float64))
    res = {"tokens": n_tokens, **_agreement(ref, np.concatenate(got, axis=0))}
    err, kl = res["max_rel_err"], res["mean_kl"]
    if not res["ok"] and np.isfinite(kl) and model.config.n_expert and getattr(model.ops, "exact", True) is False:
        return _verify_exact(model, n_tokens, seed, res)
    if not res["ok"]:
        raise BenchError(f"{model.path.name}: step-by-step logits differ from the full forward "
                         f"(max relative error {err:.3g}, limit {VERIFY_RTOL}; mean KL {kl:.3g}, limit {VERIFY_KL}); "
                         "not benchmarking a wrong model")
    return res


def _agreement(ref: np.ndarray, step: np.ndarray) -> dict[str, Any]:
    """How close stepwise logits are to reference ones: max |difference| over max |reference|, mean KL (inf with
    a non-finite value), argmax agreement, and whether both are within VERIFY_RTOL and VERIFY_KL."""
    err = float(np.max(np.abs(step - ref))) / (float(np.max(np.abs(ref))) or 1.0)
    kl = mean_kl(ref, step) if np.all(np.isfinite(step)) else float("inf")
    return {"max_rel_err": err, "mean_kl": kl,
            "argmax_agreement": float(np.mean(np.argmax(step, -1) == np.argmax(ref, -1))),
            "ok": bool(err <= VERIFY_RTOL and kl <= VERIFY_KL)}


def verify_seqs(model: Any, n_steps: int = 4, seed: int = 0) -> dict[str, Any]:
    """Three sequences of different lengths decoding together (`Model.forward_seqs`) against each decoding alone,
    with the tolerances of `verify`; BenchError on a mismatch."""
    rng = np.random.default_rng(seed)
    prompts = [_rand_tokens(rng, model.n_vocab, n) for n in (3, 9, 17)]
    alone, together = ([model.new_cache(len(p) + n_steps) for p in prompts] for _ in range(2))
    for p, a, b in zip(prompts, alone, together):
        model.forward(p[:-1], a)
        model.forward(p[:-1], b)
    last, want, got = [p[-1] for p in prompts], [], []
    for _ in range(n_steps):
        want.append(np.stack([model.forward([t], c, last_only=True)[-1] for t, c in zip(last, alone)]))
        got.append(np.asarray(model.forward_seqs([([t], c) for t, c in zip(last, together)]), np.float64))
        last = [int(t) for t in np.argmax(want[-1], -1)]
    res = _agreement(np.concatenate(want).astype(np.float64), np.concatenate(got))
    if not res.pop("ok"):
        raise BenchError(f"{model.path.name}: sequences decoding together differ from each decoding alone (max "
                         f"relative error {res['max_rel_err']:.3g}, limit {VERIFY_RTOL}; mean KL {res['mean_kl']:.3g}, "
                         f"limit {VERIFY_KL})")
    return {"sequences": len(prompts), "steps": n_steps, **res}


def _verify_exact(model: Any, n_tokens: int, seed: int, default: dict[str, Any]) -> dict[str, Any]:
    """The check again on the backend's f32 activations (eager), both results kept. Top-k expert
    routing is a step function: the ~1% noise of 8-bit decode activations picks another expert
    wherever a random router's k-th and (k+1)-th logits nearly tie, and decode then differs from
    prefill by O(1) (GPT-OSS 20B synthetic: 7 swaps in 8 tokens; bench/gptoss_route_flips.py). Exact
    numerics still catch a wrong step (a missing KV write, a bad cache offset)."""
    ops = model.ops
    graphs = ops.graphs_enabled
    ops.exact, ops.graphs_enabled = True, False
    try:
        res = verify(model, n_tokens, seed)
    finally:
        ops.exact, ops.graphs_enabled = False, graphs
    return {**res, "numerics": "exact", "default_numerics": default}


class _Depth:
    """A cache holding `depth` random tokens, rolled back (or refilled) to that depth between runs."""

    def __init__(self, model: Any, depth: int, extra: int, rng: np.random.Generator) -> None:
        self.model, self.depth = model, depth
        self.cache = model.new_cache(depth + extra)
        self.ids = _rand_tokens(rng, model.n_vocab, depth)
        self._fill()

    def _fill(self) -> None:
        self.cache.reset()
        if self.depth:
            self.model.forward(self.ids, self.cache, last_only=True)

    def rewind(self) -> Any:
        try:
            self.cache.truncate(self.depth)
        except ZincError:  # sliding-window rings and recurrent state cannot roll back: refill
            self._fill()
        return self.cache


def _time_pp(model: Any, cache: Any, ids: list[int]) -> float:
    t0 = time.perf_counter()
    model.forward(ids, cache, last_only=True)
    return time.perf_counter() - t0


def _time_tg(model: Any, cache: Any, first: int, n: int) -> float:
    """n greedy decode steps (on the device where the backend can: `Model.greedy`)."""
    t0 = time.perf_counter()
    model.greedy(first, cache, n)
    return time.perf_counter() - t0


def _one_test(model: Any, kind: str, n: int, depth: int, reps: int, warmup: bool,
              rng: np.random.Generator, log: Callable[[str], None]) -> dict[str, Any]:
    name = f"{kind}{n}" + (f"@d{depth}" if depth else "")
    log(f"{name}: filling {depth} tokens of context" if depth else f"{name}: running")
    d = _Depth(model, depth, n, rng)
    ids = _rand_tokens(rng, model.n_vocab, n)
    times = []
    for r in range(-WARMUP_RUNS if warmup else 0, reps):
        cache = d.rewind()
        dt = _time_pp(model, cache, ids) if kind == "pp" else _time_tg(model, cache, ids[0], n)
        if r >= 0:
            times.append(dt)
            log(f"{name}: run {r + 1}/{reps}: {n / dt:.2f} tok/s")
    res = {"name": name, "n_prompt": n if kind == "pp" else 0, "n_gen": n if kind == "tg" else 0,
           "depth": depth, **_rates(n, times)}
    if kind == "tg":
        res["bytes_per_token"] = decode_bytes(model, depth, n)
        res["GB_s"] = res["bytes_per_token"] * res["tok_s"] / 1e9
    return res


def _parallel_test(model: Any, n_seqs: int, n_prompt: int, n: int, reps: int, warmup: bool,
                   rng: np.random.Generator, log: Callable[[str], None]) -> dict[str, Any]:
    name = f"tg{n}x{n_seqs}"
    log(f"{name}: filling {n_seqs} caches with {n_prompt} prompt tokens each")
    seqs = [_Depth(model, n_prompt, n, rng) for _ in range(n_seqs)]
    first = _rand_tokens(rng, model.n_vocab, n_seqs)
    times = []
    for r in range(-WARMUP_RUNS if warmup else 0, reps):
        caches = [d.rewind() for d in seqs]
        t0 = time.perf_counter()
        model.greedy_seqs(first, caches, n)
        dt = time.perf_counter() - t0
        if r >= 0:
            times.append(dt)
            log(f"{name}: run {r + 1}/{reps}: {n_seqs * n / dt:.2f} tok/s")
    return {"name": name, "n_prompt": 0, "n_gen": n, "n_seqs": n_seqs, "depth": n_prompt, **_rates(n_seqs * n, times)}


def _rates(n: int, times: list[float]) -> dict[str, Any]:
    """n tokens in each of `times` seconds: mean and sample sd of the tok/s (llama-bench's), and the times."""
    rates = [n / t for t in times]
    return {"tok_s": statistics.fmean(rates), "tok_s_sd": statistics.stdev(rates) if len(rates) > 1 else 0.0,
            "samples_s": times}


def run_bench(model: Any, *, n_prompt: Iterable[int] = (512,), n_gen: Iterable[int] = (128,),
              depths: Iterable[int] = (0,), repetitions: int = 3, warmup: bool = True,
              device: str | None = None, quant: str | None = None, seed: int = 0,
              parallel: Iterable[int] = (), parallel_prompt: int = 128,
              log: Callable[[str], None] = lambda msg: None) -> dict[str, Any]:
    """Verify, then time every pp/tg test at every depth and every parallel tg test; a JSON-ready dict."""
    n_prompt = [int(p) for p in n_prompt if int(p) > 0]
    n_gen = [int(n) for n in n_gen if int(n) > 0]
    depths = [int(d) for d in depths]
    parallel = [int(b) for b in parallel if int(b) > 0]
    if repetitions < 1 or any(d < 0 for d in depths) or not (n_prompt or n_gen):
        raise BenchError("need repetitions >= 1, depths >= 0 and at least one pp or tg test")
    if parallel and (not n_gen or parallel_prompt < 1):
        raise BenchError("parallel tests need a tg size and a parallel prompt of at least 1 token")
    longest = max(depths + [parallel_prompt if parallel else 0]) + max(n_prompt + n_gen)
    if longest > model.n_ctx:
        raise BenchError(f"depth + test length {longest} exceeds the model's context {model.n_ctx}; "
                         f"load it with a larger n_ctx")
    log(f"verifying {model.path.name} on {model.ops.name}")
    check = verify(model)
    log(f"verified: max relative error {check['max_rel_err']:.2e}, argmax agreement "
        f"{check['argmax_agreement']:.0%}")
    rng = np.random.default_rng(seed)
    tests = [_one_test(model, kind, n, d, repetitions, warmup, rng, log)
             for d in depths for kind, sizes in (("pp", n_prompt), ("tg", n_gen)) for n in sizes]
    if parallel:
        check["seqs"] = verify_seqs(model)
        log(f"verified sequences decoding together: max relative error {check['seqs']['max_rel_err']:.2e}")
        tests += [_parallel_test(model, b, parallel_prompt, n, repetitions, warmup, rng, log)
                  for b in parallel for n in n_gen]
    return {
        "model": Path(model.path).name, "preset": synth_preset(model.metadata),
        "quant": quant or quant_name(model), "arch": model.config.arch, "backend": model.ops.name,
        "device": device or model.ops.device_name, "kv_type": model.ops.kv_dtype,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "n_ctx": model.n_ctx, "n_ubatch": model.n_ubatch, "repetitions": repetitions,
        "verify": check, "tests": tests,
    }


def format_table(res: dict[str, Any]) -> str:
    """A llama-bench style markdown table of a `run_bench` result."""
    head = ["model", "quant", "backend", "test", "t/s", "GB/s"]
    rows = [[res["model"] + (f" ({res['preset']})" if res["preset"] else ""), res["quant"], res["backend"],
             t["name"], f"{t['tok_s']:.2f} ± {t['tok_s_sd']:.2f}", f"{t['GB_s']:.1f}" if "GB_s" in t else ""]
            for t in res["tests"]]
    widths = [max(len(str(r[i])) for r in [head] + rows) for i in range(len(head))]
    right = (4, 5)  # the numbers

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(str(c).rjust(w) if i in right else str(c).ljust(w)
                                 for i, (c, w) in enumerate(zip(cells, widths))) + " |"

    sep = "| " + " | ".join("-" * (w - 1) + ":" if i in right else "-" * w for i, w in enumerate(widths)) + " |"
    return "\n".join([line(head), sep] + [line(r) for r in rows] + [f"\n{res['device']}, {res['date']}"])
