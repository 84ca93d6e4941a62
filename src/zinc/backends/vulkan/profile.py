"""Where a Vulkan decode step's time goes: `python -m zinc.backends.vulkan.profile MODEL.gguf`.

Per decoded token (greedy, one token at a time after a short prompt, as `zinc bench` times tg):
* wall: `model.forward([tok])` plus the host argmax of the logits;
* encode: Python from the start of the step to the submit (recording dispatches);
* submit: `queue.submit`;
* wait: from the submit until the logits are mapped on the host (GPU time plus sync latency);
(decode steps replay their recording, see replay.py; `--no-replay` runs the model code every step)
and the device greedy loop (`Model.greedy`: the host encodes every step ahead and reads the ids once):
host ms per token until that read, wall ms per token;
then, with timestamp queries between dispatches, the GPU time of every (shader, grid size) per token.
Prints a table; `--json FILE` writes everything. The matvec kernels alone, at every config:
`bench/vulkan_matvec_sweep.py`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

import numpy as np


def _timed_steps(model: Any, n: int, first: int) -> list[dict[str, float]]:
    dev = model.ops.dev
    marks: dict[str, float] = {}
    flush, read = dev.flush, dev.read

    def timed_flush() -> None:
        marks.setdefault("submit0", time.perf_counter())
        flush()
        marks.setdefault("submit1", time.perf_counter())

    def timed_read(buf: Any, nbytes: int) -> bytes:
        out = read(buf, nbytes)
        marks["read1"] = time.perf_counter()
        return out

    dev.flush, dev.read = timed_flush, timed_read
    steps, tok = [], first
    cache = model.new_cache(n + 16)
    model.forward(list(range(1, 9)), cache, last_only=True)
    try:
        for _ in range(n):
            marks.clear()
            t0 = time.perf_counter()
            logits = model.forward([tok], cache, last_only=True)
            tok = int(np.argmax(logits[-1]))
            t1 = time.perf_counter()
            s0, s1, r1 = marks.get("submit0", t0), marks.get("submit1", t0), marks.get("read1", t1)
            steps.append({"wall_ms": 1e3 * (t1 - t0), "encode_ms": 1e3 * (s0 - t0), "submit_ms": 1e3 * (s1 - s0),
                          "wait_ms": 1e3 * (r1 - s1), "host_after_ms": 1e3 * (t1 - r1)})
    finally:
        del dev.flush, dev.read
    return steps


def _greedy_loop(model: Any, n: int) -> dict[str, float]:
    """Per token of `Model.greedy` (the device loop): host time until the one read of the ids, and wall."""
    dev = model.ops.dev
    cache = model.new_cache(2 * n + 16)
    model.forward(list(range(1, 9)), cache, last_only=True)
    model.greedy(1, cache, 4)  # warm-up
    marks: dict[str, float] = {}
    read = dev.read

    def timed_read(buf: Any, nbytes: int) -> bytes:
        marks.setdefault("read0", time.perf_counter())
        return read(buf, nbytes)
    dev.read = timed_read
    try:
        t0 = time.perf_counter()
        model.greedy(1, cache, n)
        t1 = time.perf_counter()
    finally:
        del dev.read
    return {"host_ms_per_token": 1e3 * (marks.get("read0", t1) - t0) / n, "wall_ms_per_token": 1e3 * (t1 - t0) / n}


def _gpu_profile(model: Any, n: int) -> dict[str, Any]:
    dev = model.ops.dev
    cache = model.new_cache(n + 16)
    model.forward(list(range(1, 9)), cache, last_only=True)
    dev.start_profile()
    tok = 1
    for _ in range(n):
        tok = int(np.argmax(model.forward([tok], cache, last_only=True)[-1]))
    return dev.stop_profile()


def profile(path: str, n_tokens: int = 24, n_profile: int = 8, replay: bool = True, **opts: Any) -> dict[str, Any]:
    import zinc

    model = zinc.load(path, backend="vulkan", n_ctx=256, **opts)
    model.ops.replay = replay
    dev = model.ops.dev
    _timed_steps(model, 4, 1)  # warm-up: pipelines compiled, pools filled
    d0, s0 = dev.n_dispatches, dev.n_submits
    steps = _timed_steps(model, n_tokens, 1)
    med = {k: statistics.median(s[k] for s in steps) for k in steps[0]}
    res: dict[str, Any] = {"model": str(path), "adapter": dev.info.get("device"), "features": dev.features,
                           "subgroups": dev.subgroups, "tokens": n_tokens, "median": med,
                           "dispatches_per_token": (dev.n_dispatches - d0) / n_tokens,
                           "submits_per_token": (dev.n_submits - s0) / n_tokens}
    if replay:
        res["greedy_loop"] = _greedy_loop(model, n_tokens)
    rp = model.ops._replayer
    res["replay"] = None if rp is None else {"records": rp.records, "replays": rp.replays,
                                             "refused": [why for _, why in rp.refused.values()]}
    if "timestamp-query-inside-passes" in dev.features and n_profile:
        prof = _gpu_profile(model, n_profile)
        per_tok = {k: v / 1e3 / n_profile for k, v in prof["ns"].items()}
        res["gpu_us_per_token"] = dict(sorted(per_tok.items(), key=lambda kv: -kv[1]))
        res["gpu_dispatches_per_token"] = {k: v / n_profile for k, v in prof["count"].items()}
        res["gpu_ms_per_token"] = sum(per_tok.values()) / 1e3
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("-n", type=int, default=24, help="decode steps timed")
    ap.add_argument("--profile-steps", type=int, default=8, help="decode steps timed per dispatch on the GPU")
    ap.add_argument("--json", help="write the result here")
    ap.add_argument("--allow-cpu", action="store_true", help="take a CPU adapter (lavapipe) too")
    ap.add_argument("--no-replay", action="store_true", help="run the model code every decode step")
    ap.add_argument("--f32-matvec", action="store_true", help="decode matvecs on f32 activations (matvec_q8=False)")
    ap.add_argument("--submit-every", type=int, default=None,
                    help="submit every this many dispatches (0: once per step; default: the backend's)")
    ap.add_argument("--submit-first", type=int, default=None,
                    help="the first submit of a step after this many dispatches (0: as --submit-every)")
    a = ap.parse_args(argv)
    opts = {} if a.submit_every is None else {"submit_every": a.submit_every}
    if a.submit_first is not None:
        opts["submit_first"] = a.submit_first
    if a.f32_matvec:
        opts["matvec_q8"] = False
    res = profile(a.model, a.n, a.profile_steps, replay=not a.no_replay, allow_cpu_adapter=a.allow_cpu, **opts)
    m = res["median"]
    print(f"adapter {res['adapter']}  subgroups {res['subgroups']}  features {res['features']}")
    print(f"per token (median of {res['tokens']}): wall {m['wall_ms']:.2f} ms = encode {m['encode_ms']:.2f} + "
          f"submit {m['submit_ms']:.2f} + wait {m['wait_ms']:.2f} + after {m['host_after_ms']:.2f}; "
          f"{res['dispatches_per_token']:.0f} dispatches, {res['submits_per_token']:.1f} submits; replay {res['replay']}")
    if "greedy_loop" in res:
        g = res["greedy_loop"]
        print(f"device greedy loop, per token: host {g['host_ms_per_token']:.2f} ms (encoding, ahead of the GPU), "
              f"wall {g['wall_ms_per_token']:.2f} ms")
    if "gpu_ms_per_token" in res:
        print(f"GPU time per token (sum of dispatches): {res['gpu_ms_per_token']:.3f} ms")
        for k, us in list(res["gpu_us_per_token"].items())[:25]:
            print(f"  {us:10.1f} us  x{res['gpu_dispatches_per_token'][k]:5.0f}  {k}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
