"""Check and time the CUDA backend on a real GPU: `python -m zinc.backends.cuda.profile [--out DIR]`.

1. every kernel against the NumPy backend at the shapes of Qwen3-8B (fresh random inputs);
2. the per-kernel decode timings (median of `triton.testing.do_bench`, rotating weight copies so
   the L2 cache does not serve them) with the bytes each reads and the GB/s that gives;
3. tiny models (qwen3-tiny, llama3-tiny): logits and graph-replayed decode against the NumPy backend;
4. with `--model PATH`: one decode step as a CUDA graph, its replay time and the bytes it reads.
Prints short tables; writes the full numbers as JSON under `--out`.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
import triton

from zinc.backends.base import RopeParams
from zinc.backends.cpu import CpuOps
from zinc.backends.cuda.kernels import mmvq
from zinc.backends.cuda.ops import CudaOps
from zinc.gguf.constants import GGMLType as T
from zinc.testing.compare import compare_logits, random_weight, rel_err

SHAPES = [(T.Q4_K, 4096, 4096), (T.Q4_K, 1024, 4096), (T.Q6_K, 1024, 4096), (T.Q4_K, 12288, 4096),
          (T.Q4_K, 4096, 12288), (T.Q6_K, 4096, 12288), (T.Q8_0, 4096, 4096), (T.Q6_K, 151936, 4096)]


def check_matmul(ops, rows_list=(1, 3, 64)) -> list[dict]:
    """Quantized matmul at real shapes against float64 math on the NumPy dequantization."""
    res = []
    for t, n, k in SHAPES[:-1]:
        qt = random_weight(t, (n, k), n + k)
        w64 = qt.dequantize().astype(np.float64)
        cw = ops.upload(qt)
        for rows in rows_list:
            x = np.random.default_rng(rows).standard_normal((rows, k)).astype(np.float32)
            got = ops.to_numpy(ops.matmul(ops.from_numpy(x), cw))
            res.append({"op": "matmul", "type": t.name, "N": n, "K": k, "rows": rows,
                        "rel_err": rel_err(got, x.astype(np.float64) @ w64.T)})
        full = ops.to_numpy(ops.dequantize(cw, torch.float32))
        res.append({"op": "dequant", "type": t.name, "N": n, "K": k, "rows": n, "rel_err": rel_err(full, w64)})
    return res


def check_small_ops(ops, ref) -> list[dict]:
    """Norm, rope, GLU and attention at decode / prefill shapes of Qwen3-8B."""
    rng = np.random.default_rng(7)
    res = []
    x = rng.standard_normal((5, 4096)).astype(np.float32)
    w = rng.standard_normal(4096).astype(np.float32)
    res.append({"op": "rms_norm", "rel_err": rel_err(ops.to_numpy(ops.rms_norm(ops.from_numpy(x), ops.from_numpy(w), 1e-6)),
                                                 ref.rms_norm(x, w, 1e-6))})
    q = rng.standard_normal((5, 32, 128)).astype(np.float32)
    pos = np.arange(1000, 1005, dtype=np.int32)
    for mode in ("neox", "norm"):
        p = RopeParams(128, mode, 1e6)
        got = ops.rope(ops.from_numpy(q), ops.from_numpy(pos), p)
        res.append({"op": f"rope_{mode}", "rel_err": rel_err(ops.to_numpy(got), ref.rope(q, pos, p))})
    g, u = rng.standard_normal((2, 12288)).astype(np.float32), rng.standard_normal((2, 12288)).astype(np.float32)
    res.append({"op": "glu_silu", "rel_err": rel_err(ops.to_numpy(ops.glu(ops.from_numpy(g), ops.from_numpy(u), "silu")),
                                                 ref.glu(g, u, "silu"))})
    S, n_kv = 4096, 3001
    k = rng.standard_normal((S, 8, 128)).astype(np.float16)
    v = rng.standard_normal((S, 8, 128)).astype(np.float16)
    kp = np.full(S, -1, np.int32)
    kp[:n_kv] = np.arange(n_kv)
    for T_ in (1, 4, 300):
        qq = rng.standard_normal((T_, 32, 128)).astype(np.float32)
        qp = np.arange(n_kv - T_, n_kv, dtype=np.int32)
        want = ref.attention(qq, k, v, qp, kp, n_kv, 0.088)
        got = ops.attention(*(ops.from_numpy(a) for a in (qq, k, v, qp, kp)), n_kv, 0.088)
        res.append({"op": f"attention_T{T_}", "rel_err": rel_err(ops.to_numpy(got), want)})
    return res


def _bench(fn) -> float:
    """Median microseconds of fn() (events; warm-up and repeats in ms)."""
    return float(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")) * 1e3


def time_matvec(ops) -> list[dict]:
    """Decode matvec per shape at its configured tiles (bench/cuda_mmvq_sweep.py sweeps them);
    weights rotate over > 256 MB so the L2 does not serve them. The activation quantization
    (shared by the projections of one input) is timed on its own."""
    res = []
    for t, n, k in SHAPES:
        qt = random_weight(t, (n, k), 1)
        copies = max(1, min(8, (256 << 20) // qt.nbytes + 1))
        ws = [ops.upload(qt) for _ in range(copies)]
        x = torch.randn((1, k), device=ops.device)
        xqt = mmvq.quantize_x(x)
        y = torch.empty((1, n), device=ops.device)
        it = iter(range(1 << 30))
        us = _bench(lambda: mmvq.matvec(xqt, ws[next(it) % copies].parts, int(t), n, k, y))
        res.append({"type": t.name, "N": n, "K": k, "config": mmvq.config(int(t), n, k, False), "us": us,
                    "GB_s": qt.nbytes / us / 1e3, "quantize_us": _bench(lambda: mmvq.quantize_x(x))})
        del ws
    return res


def time_prefill(ops) -> list[dict]:
    """Dequantize-to-f16 and the f16 GEMM of a 512-token prefill, per weight shape."""
    res = []
    for t, n, k in SHAPES[:6]:
        cw = ops.upload(random_weight(t, (n, k), 2))
        x = torch.randn((512, k), device=ops.device)
        wt = ops.dequantize(cw)
        xh = x.half()
        res.append({"type": t.name, "N": n, "K": k, "dequant_us": _bench(lambda: ops.dequantize(cw)),
                    "gemm_us": _bench(lambda: xh @ wt.t()), "matmul_us": _bench(lambda: ops.matmul(x, cw))})
    return res


def time_small_ops(ops) -> list[dict]:
    dev = ops.device
    x = torch.randn((1, 4096), device=dev)
    w = torch.randn(4096, device=dev)
    q = torch.randn((1, 32, 128), device=dev)
    pos = torch.tensor([700], dtype=torch.int32, device=dev)
    g, u = torch.randn((1, 12288), device=dev), torch.randn((1, 12288), device=dev)
    res = [{"op": "rms_norm 4096", "us": _bench(lambda: ops.rms_norm(x, w, 1e-6))},
           {"op": "rope 32x128", "us": _bench(lambda: ops.rope(q, pos, RopeParams(128, "neox", 1e6)))},
           {"op": "glu 12288", "us": _bench(lambda: ops.glu(g, u, "silu"))},
           {"op": "add 4096", "us": _bench(lambda: ops.add(x, x))}]
    for n_kv in (512, 4096, 16384):
        k = torch.randn((n_kv, 8, 128), device=dev).half()
        kp = torch.arange(n_kv, dtype=torch.int32, device=dev)
        p = torch.tensor([n_kv - 1], dtype=torch.int32, device=dev)
        us = _bench(lambda: ops.attention(q, k, k, p, kp, n_kv, 0.088))
        res.append({"op": f"attention decode n_kv={n_kv}", "us": us})
    return res


def check_tiny_models(tmp: Path) -> list[dict]:
    """Logits of synthetic tiny models on cuda vs cpu: argmax (margin >= 0.05), KL, graph decode."""
    from zinc.api import load
    from zinc.synth import write_model

    res = []
    for preset in ("qwen3-tiny", "llama3-tiny"):
        for ftype in ("Q4_K_M", "Q8_0", "Q6_K", "F16"):
            path = tmp / f"{preset}-{ftype}.gguf"
            write_model(str(path), preset, ftype=ftype, seed=0)
            ids = [int(i) for i in np.random.default_rng(3).integers(0, 512, 40)]
            try:
                cpu, gpu = load(path, backend="cpu", n_ctx=128), load(path, backend="cuda", n_ctx=128)
            except Exception as e:  # noqa: BLE001 - a report, not a test
                res.append({"model": path.name, "error": repr(e)[:200]})
                continue
            ref = cpu.logits(ids)
            got = gpu.logits(ids)
            cache = gpu.new_cache(128)
            step = [gpu.forward(ids[:20], cache)]
            step += [gpu.forward([t], cache, last_only=True) for t in ids[20:]]
            res.append({"model": path.name, **compare_logits(got, ref),
                        "decode": compare_logits(np.concatenate(step), ref),
                        "graph_captures": getattr(gpu.ops._graphs, "captures", 0)})
    return res


def time_decode_graph(path: Path, n_steps: int = 128) -> dict:
    """Replay time of the captured decode step of a real-shape model (GPU time per token)."""
    from zinc.api import load

    m = load(path, backend="cuda", n_ctx=1024)
    cache = m.new_cache(1024)
    ids = [int(i) for i in np.random.default_rng(0).integers(0, m.n_vocab, 16)]
    m.forward(ids, cache, last_only=True)
    m.forward([ids[0]], cache, last_only=True)  # capture
    g = next(iter(m.ops._graphs.graphs.values()))
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(n_steps):  # same position each time: the graph's cost, not the cache growth
        g.graph.replay()
    end.record()
    torch.cuda.synchronize()
    gpu_ms = start.elapsed_time(end) / n_steps
    t0 = time.perf_counter()
    for t in ids * 2:
        m.forward([t], cache, last_only=True)
    host_ms = (time.perf_counter() - t0) / (2 * len(ids)) * 1e3
    prof = kernel_breakdown(m, cache, ids)
    long_ids = [int(i) for i in np.random.default_rng(1).integers(0, m.n_vocab, 512)]
    pre = kernel_breakdown(m, m.new_cache(1024), [long_ids], steps=1)
    t0 = time.perf_counter()
    m.forward(long_ids, m.new_cache(1024), last_only=True)
    pre_ms = (time.perf_counter() - t0) * 1e3
    wbytes = sum(w.nbytes for n, w in m.weights.tensors.items() if hasattr(w, "nbytes") and n != "token_embd.weight")
    return {"replay_ms": gpu_ms, "forward_ms": host_ms, "prefill512_ms": pre_ms, "weight_bytes_per_token": wbytes,
            "replay_GB_s": wbytes / gpu_ms / 1e6, "replay_tok_s": 1e3 / gpu_ms, "forward_tok_s": 1e3 / host_ms,
            "kernels_per_step": prof, "prefill512_kernels": pre}


def kernel_breakdown(m, cache, ids, steps: int = 4) -> list[dict]:
    """GPU time per kernel name over `steps` eager decode steps (torch.profiler), per step."""
    from torch.profiler import ProfilerActivity, profile

    m.ops.graphs_enabled = False
    try:
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for t in ids[:steps]:
                m.forward(t if isinstance(t, list) else [t], cache, last_only=True)
            torch.cuda.synchronize()
    finally:
        m.ops.graphs_enabled = True
    rows = {}
    for e in prof.key_averages():
        us = getattr(e, "device_time_total", None) or getattr(e, "cuda_time_total", 0)
        if us > 0 and e.count > 0:
            rows[e.key[:60]] = {"kernel": e.key[:60], "us_per_step": us / steps, "launches_per_step": e.count / steps}
    return sorted(rows.values(), key=lambda r: -r["us_per_step"])[:25]


def _table(rows: list[dict], keys: list[str]) -> str:
    out = [" | ".join(keys)]
    for r in rows:
        out.append(" | ".join(f"{r.get(k):.4g}" if isinstance(r.get(k), float) else str(r.get(k)) for k in keys))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=".")
    ap.add_argument("--model", help="a real-shape GGUF for the decode-graph timing")
    ap.add_argument("--skip", default="", help="comma list of: check,matvec,prefill,small,tiny")
    a = ap.parse_args(argv)
    out, skip = Path(a.out), set(a.skip.split(","))
    out.mkdir(parents=True, exist_ok=True)
    ops, ref = CudaOps(graphs=False), CpuOps()
    report: dict = {"device": ops.device_name, "torch": torch.__version__, "triton": triton.__version__}
    stages = [("check", lambda: check_matmul(ops) + check_small_ops(ops, ref),
               ["op", "type", "N", "K", "rows", "rel_err"]),
              ("matvec", lambda: time_matvec(ops),
               ["type", "N", "K", "config", "us", "GB_s", "quantize_us"]),
              ("prefill", lambda: time_prefill(ops), ["type", "N", "K", "dequant_us", "gemm_us", "matmul_us"]),
              ("small", lambda: time_small_ops(ops), ["op", "us"]),
              ("tiny", lambda: check_tiny_models(Path(tempfile.mkdtemp())),
               ["model", "argmax_agree", "n_sure", "mean_kl", "rel_err",
                                                      "decode", "graph_captures", "error"])]
    for name, fn, keys in stages:
        if name in skip:
            continue
        t0 = time.perf_counter()
        try:
            report[name] = rows = fn()
            print(f"\n## {name} ({time.perf_counter() - t0:.1f} s)\n" + _table(rows, keys), flush=True)
        except Exception as e:  # noqa: BLE001 - keep going: one call covers every stage
            import traceback

            report[name] = {"error": traceback.format_exc()}
            print(f"\n## {name}: FAILED {e!r}\n{traceback.format_exc()[-1500:]}", flush=True)
        (out / "profile.json").write_text(json.dumps(report, indent=1, default=str))
    if a.model:
        report["decode_graph"] = time_decode_graph(Path(a.model))
        dg = report["decode_graph"]
        print("\n## decode graph\n" + json.dumps({k: v for k, v in dg.items() if k != "kernels_per_step"}, indent=1))
        print(_table(dg["kernels_per_step"], ["kernel", "us_per_step", "launches_per_step"]), flush=True)
        print("\n## prefill 512\n" + _table(dg["prefill512_kernels"], ["kernel", "us_per_step", "launches_per_step"]))
        (out / "profile.json").write_text(json.dumps(report, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
