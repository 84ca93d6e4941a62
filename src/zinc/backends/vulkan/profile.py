"""Where a Vulkan decode step's time goes: `python -m zinc.backends.vulkan.profile MODEL.gguf`.

Per decoded token (greedy, one token at a time after a short prompt, as `zinc bench` times tg):
* wall: `model.forward([tok])` plus the host argmax of the logits;
* encode: Python from the start of the step to the submit (recording dispatches);
* submit: `queue.submit`;
* wait: from the submit until the logits are mapped on the host (GPU time plus sync latency);
(decode steps replay their recording, see replay.py; `--no-replay` runs the model code every step)
then, with timestamp queries between dispatches, the GPU time of every (shader, grid size) per token.
Prints a table; `--json FILE` writes everything.
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


# Qwen3-8B's decode weight products: (kernel, ggml type, N, K)
SWEEP_SHAPES = [("matvec", "Q4_K", 4096, 4096), ("matvec", "Q4_K", 1024, 4096), ("matvec", "Q6_K", 1024, 4096),
                ("matvec_glu", "Q4_K", 12288, 4096), ("matvec", "Q4_K", 4096, 12288),
                ("matvec", "Q6_K", 4096, 12288), ("matvec", "Q6_K", 151936, 4096)]
SWEEP_CONFIGS = [(L, R, S) for L in (8, 16, 32) for R in (1, 2, 4) for S in (1, 2, 4, 8) if L * S <= 256]


def sweep(shapes=SWEEP_SHAPES, configs=SWEEP_CONFIGS, reps: int = 24, rotate_bytes: int = 160 << 20,
          allow_cpu_adapter: bool = False) -> list[dict[str, Any]]:
    """GPU time of the matvec kernels at each (L, R, S) on random packed weights (timing only: the
    bytes are random), rotating through enough weight copies that the L2 cache does not hold them."""
    from zinc.backends.base import QTensor
    from zinc.backends.vulkan.ops import VulkanOps
    from zinc.gguf.constants import GGMLType
    from zinc.gguf.quants import block_layout

    ops = VulkanOps(allow_cpu_adapter=allow_cpu_adapter)
    dev, rng, out = ops.dev, np.random.default_rng(0), []
    for kernel, t, N, K in shapes:
        gt = GGMLType[t]
        bs, ts = block_layout(gt)
        raw = rng.integers(0, 256, N * K // bs * ts, dtype=np.uint8)
        raw[:] &= 0x3B  # keeps every f16 scale finite
        one = ops.upload(QTensor("w", gt, (N, K), raw))
        nbytes = N * K // bs * ts * (2 if kernel == "matvec_glu" else 1)
        ws = [one] + [ops.upload(QTensor("w", gt, (N, K), raw)) for _ in range(max(1, rotate_bytes // nbytes) - 1)]
        x = ops.from_numpy(rng.standard_normal((1, K)).astype(np.float32))
        y = ops._new((N,))
        for cfg in configs:
            ops.matvec = {kernel: cfg}
            subs = {"EXPR": "g * u"} if kernel == "matvec_glu" else {}

            def call(i: int) -> None:
                w = ws[i % len(ws)]
                ops._matvec(kernel, x, (w, ws[(i + 1) % len(ws)]) if kernel == "matvec_glu" else (w,), y, None, subs)
            try:
                for i in range(3):
                    call(i)
                dev.flush()
                dev.start_profile()
                for i in range(reps):
                    call(i)
                prof = dev.stop_profile()
            except Exception as e:  # noqa: BLE001 - a config the adapter rejects
                out.append({"kernel": kernel, "type": t, "N": N, "K": K, "cfg": cfg, "error": str(e)[:200]})
                continue
            us = sum(prof["ns"].values()) / sum(prof["count"].values()) / 1e3
            out.append({"kernel": kernel, "type": t, "N": N, "K": K, "cfg": cfg, "us": us,
                        "GBps": nbytes / us / 1e3})
        best = min((r for r in out if r["N"] == N and r["K"] == K and r["type"] == t and "us" in r
                    and r["kernel"] == kernel), key=lambda r: r["us"])
        print(f"{kernel} {t} {N}x{K}: best {best['cfg']} {best['us']:.1f} us {best['GBps']:.0f} GB/s; "
              + " ".join(f"{r['cfg']}:{r['us']:.0f}" for r in out if r.get("N") == N and r.get("K") == K
                         and r["type"] == t and r["kernel"] == kernel and "us" in r), flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", nargs="?")
    ap.add_argument("--sweep", action="store_true", help="time the matvec shapes instead (no model)")
    ap.add_argument("-n", type=int, default=24, help="decode steps timed")
    ap.add_argument("--profile-steps", type=int, default=8, help="decode steps timed per dispatch on the GPU")
    ap.add_argument("--json", help="write the result here")
    ap.add_argument("--allow-cpu", action="store_true", help="take a CPU adapter (lavapipe) too")
    ap.add_argument("--no-replay", action="store_true", help="run the model code every decode step")
    ap.add_argument("--submit-every", type=int, default=None,
                    help="submit every this many dispatches (0: once per step; default: the backend's)")
    a = ap.parse_args(argv)
    if a.sweep:
        res = sweep(allow_cpu_adapter=a.allow_cpu)
        if a.json:
            with open(a.json, "w") as f:
                json.dump(res, f, indent=1)
        return 0
    opts = {} if a.submit_every is None else {"submit_every": a.submit_every}
    res = profile(a.model, a.n, a.profile_steps, replay=not a.no_replay, allow_cpu_adapter=a.allow_cpu, **opts)
    m = res["median"]
    print(f"adapter {res['adapter']}  subgroups {res['subgroups']}  features {res['features']}")
    print(f"per token (median of {res['tokens']}): wall {m['wall_ms']:.2f} ms = encode {m['encode_ms']:.2f} + "
          f"submit {m['submit_ms']:.2f} + wait {m['wait_ms']:.2f} + after {m['host_after_ms']:.2f}; "
          f"{res['dispatches_per_token']:.0f} dispatches, {res['submits_per_token']:.1f} submits; replay {res['replay']}")
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
