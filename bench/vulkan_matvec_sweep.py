"""Vulkan decode matvec sweep: every kernel variant at Qwen3-8B's decode shapes, checked, then timed.

`python bench/vulkan_matvec_sweep.py` (no arguments) on a GPU; `--small --allow-cpu` runs small shapes on
lavapipe. For each shape (Q4_K / Q6_K, random valid blocks) and each variant — the f32-activation kernels
(`matvec`, `matvec_glu`) and the 8-bit-activation ones (`mvq`, `mvq_glu`) at several (L lanes per row,
R rows per lane, S row slots per workgroup; the mvq ones each with and without XS: activation rows
staged in workgroup memory first, VulkanOps.matvec_xs), 1 token, plus 2 and 4 tokens at the default
shapes — the output is first compared with the NumPy backend on a subset of rows (the mvq kernels on the
same 8-bit activations), then the dispatch is timed, rotating through enough weight copies that the L2
cache does not hold them. Also timed: the activation quantization (`quant_q8`, what an `mvq_glu` config
without 8-bit output adds before the down projection) and the row norms.

Timing (--chain M, the default M = 64): M back-to-back dispatches of the variant recorded into one
compute pass (each writes the same output, so each waits for the one before, as in a decode step) and
submitted at once; (wall(M) - wall(1)) / (M - 1) of submit + wait, medians over --reps repeats: the cost
per dispatch inside a step, fixed per-dispatch cost included, submit and readback excluded. --timestamps:
the old mode, GPU timestamps written around every dispatch (which inflate each by several us on an H200).

Prints, per shape, the defaults and the best configs; at the end a table per shape (default and best
config) and the matvec time of one Qwen3-8B Q4_K_M decode token (shape counts below) for the current
defaults and for the best configs. Writes every row to $OUT/vulkan_matvec_sweep.json when OUT is set (or
to --json).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

import numpy as np

from zinc.backends.cpu import CpuOps
from zinc.backends.vulkan.ops import _GLU, MATVEC_CONFIG, MATVEC_XS, VulkanOps
from zinc.gguf.constants import GGMLType
from zinc.gguf.quants import dequantize_rows
from zinc.testing.compare import random_weight

Q4, Q6 = GGMLType.Q4_K, GGMLType.Q6_K
# (glu?, type, N, K, uses per Qwen3-8B Q4_K_M decode token): Q/K/V stacked in the 18 layers where all
# three are Q4_K (fuse_qkv), separate in the 18 whose V is Q6_K; o; gate+up; down (half Q6_K); output
SHAPES = [(False, Q4, 6144, 4096, 18), (False, Q4, 4096, 4096, 54), (False, Q4, 1024, 4096, 18),
          (False, Q6, 1024, 4096, 18), (True, Q4, 12288, 4096, 36), (False, Q4, 4096, 12288, 18),
          (False, Q6, 4096, 12288, 18), (False, Q6, 151936, 4096, 1)]
SMALL = [(False, Q4, 96, 512, 1), (False, Q6, 64, 768, 1), (True, Q4, 256, 512, 1), (False, Q6, 1000, 256, 1)]
F32_CONFIGS = [(32, 1, 2), (32, 2, 2), (16, 1, 4)]
# workgroups of 32 .. 256 threads (S = 16: more rows share one staged copy of the activations, XS)
MVQ_CONFIGS = [(L, R, S) for L, Ss in ((32, (1, 2, 4, 8)), (16, (2, 4, 8, 16)), (8, (4, 8, 16))) for R in (1, 2, 4)
               for S in Ss]
GLU_CONFIGS = [(32, 1, 4), (32, 2, 4), (32, 1, 8), (16, 2, 4), (32, 1, 32), (32, 2, 16), (32, 4, 8), (16, 2, 16),
               (16, 4, 8), (16, 1, 32), (8, 4, 8), (32, 2, 8), (16, 4, 16)]
SMALL_CONFIGS = [(32, 1, 8), (16, 2, 16), (16, 2, 2)]
CHECK_ROWS = 64  # rows compared with NumPy at each end of the output
TOL = 1e-4  # normalized max error against NumPy on the same activations


class Bench:
    def __init__(self, ops: VulkanOps, reps: int, rotate_bytes: int, chain: int) -> None:
        """chain: dispatches per timed submit (0: GPU timestamps instead)."""
        self.ops, self.dev, self.reps, self.rotate, self.chain = ops, ops.dev, reps, rotate_bytes, chain
        self.cpu, self.rng, self.rows = CpuOps(), np.random.default_rng(0), []
        self.sync = self.dev.buffer_from(np.zeros(4, np.float32))  # read back to wait for a submit
        self.xs = (False, True)  # XS values tried for the q8 kernels

    def gpu_us(self, call: Any) -> float:
        """Time of one dispatch of `call(i)`: chained (see the module doc) or by timestamps (mean)."""
        for i in range(2):
            call(i)
        self.dev.flush()
        if self.chain:
            return self.chain_us(call)
        self.dev.start_profile()
        for i in range(self.reps):
            call(i)
        prof = self.dev.stop_profile()
        return sum(prof["ns"].values()) / max(1, sum(prof["count"].values())) / 1e3

    def wall(self, call: Any, m: int) -> float:
        """Seconds from submit to done of m dispatches call(0 .. m) recorded in one compute pass (the
        ops' Device does not submit on its own: submit_every=0). The command buffer is finished before
        the clock starts (wgpu-native encodes the commands there, ~1 us a dispatch of host time that a
        decode step overlaps with the GPU), so this takes the Device's encoder and submits it itself."""
        dev = self.dev
        for i in range(m):
            call(i)
        dev._end_pass()
        cb = dev._encoder.finish()
        dev._encoder = None  # the read below flushes: the Device's per-step state is reset there
        t0 = time.perf_counter()
        dev.device.queue.submit([cb])
        dev.read(self.sync, 4)  # queue order: done after every dispatch before it
        return time.perf_counter() - t0

    def chain_us(self, call: Any) -> float:
        m = self.chain
        big = float(np.median([self.wall(call, m) for _ in range(self.reps)]))
        one = float(np.median([self.wall(call, 1) for _ in range(self.reps)]))
        return (big - one) / (m - 1) * 1e6

    def shape(self, glu: bool, t: GGMLType, N: int, K: int, uses: int, configs: list, f32_configs: list) -> None:
        ops = self.ops
        qts = [random_weight(t, (N, K), seed) for seed in ((1, 2) if glu else (1,))]
        nbytes = sum(q.nbytes for q in qts)
        copies = max(1, min(32, self.rotate // nbytes))
        ws = [tuple(ops.upload(q) for q in qts) for _ in range(copies)]
        rows = np.r_[0:min(N, CHECK_ROWS), max(CHECK_ROWS, N - CHECK_ROWS):N]
        deq = [dequantize_rows(q.rows()[rows], t, (len(rows), K)) for q in qts]
        label = f"{'glu ' if glu else ''}{t.name} {N}x{K}"
        for T in (1, 2, 4):
            x = self.rng.standard_normal((T, K)).astype(np.float32)
            for kind in ("f32", "q8"):
                if kind == "f32" and T > 1:
                    continue
                kernel = ("mvq" if kind == "q8" else "matvec") + ("_glu" if glu else "")
                cfgs = (configs if kind == "q8" else f32_configs) if T == 1 else [MATVEC_CONFIG[kernel]]
                xv = _q8(x) if kind == "q8" else x
                ref = xv @ deq[0].T
                if glu:
                    ref = self.cpu.glu(ref, xv @ deq[1].T, "silu")
                for cfg in cfgs:
                    for xs in (self.xs if kind == "q8" else (False,)):
                        self.run(label, uses, kernel, cfg, xs, ws, x, T, N, ref, rows, nbytes, t, K)
        if glu or K > 4096:  # what an mvq_glu config without 8-bit output adds: quantizing y for down
            self.aux("quant_q8", (N if glu else K), 1)
        print(self.summary_line(label), flush=True)

    def run(self, label, uses, kernel, cfg, xs, ws, x_np, T, N, ref, rows, nbytes, t, K) -> None:
        ops = self.ops
        ops.matvec[kernel] = cfg
        if kernel in ops.matvec_xs:
            ops.matvec_xs[kernel] = xs
        if xs and not ops._mvq_xs(kernel, (*cfg, xs), K, min(T, 4)):
            return  # the rows do not fit the adapter's workgroup memory: the kernel without XS
        x, y = ops.from_numpy(x_np), ops._new((T, N))
        subs = {"EXPR": _GLU["silu"]} if kernel.endswith("glu") else {}
        q8 = kernel.startswith("mvq")
        mv = ops._mvq if q8 else ops._matvec

        def call(i: int) -> None:
            mv(kernel, x, ws[i % len(ws)], [y] if q8 else y, None, subs)
        row = {"shape": label, "type": t.name, "N": N, "K": K, "T": T, "uses": uses, "kernel": kernel,
               "cfg": list(cfg), "xs": xs,
               "default": tuple(cfg) == tuple(MATVEC_CONFIG[kernel]) and xs == MATVEC_XS.get(kernel, False),
               "q8_out": kernel == "mvq_glu" and cfg[1] * cfg[2] % 32 == 0 and N % 256 == 0}
        try:
            call(0)
            got = ops.to_numpy(y)[:, rows]
            row["err"] = float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30))
            row["us"] = self.gpu_us(call)
            row["GBps"] = nbytes / row["us"] / 1e3
        except Exception as e:  # noqa: BLE001 - a config the adapter rejects is reported, not fatal
            row["error"] = f"{type(e).__name__}: {str(e)[:300]}"
        row["ok"] = row.get("err", 1.0) <= TOL
        self.rows.append(row)

    def aux(self, what: str, D: int, rows: int) -> None:
        """Time one of the small kernels around the matvecs: quant_q8, rms_norm (old), rms_norm4, attention@n_kv."""
        ops = self.ops
        x = ops.from_numpy(self.rng.standard_normal((rows, D)).astype(np.float32))
        w = ops.from_numpy(self.rng.standard_normal(D).astype(np.float32))
        if what.startswith("attention"):  # Qwen3-8B decode: 32 query heads, 8 KV heads of 128, n_kv cells
            n_kv = int(what.split("@")[1])
            q, k, v = (ops.from_numpy(self.rng.standard_normal(s).astype(np.float32))
                       for s in ((1, 32, 128), (n_kv, 8, 128), (n_kv, 8, 128)))
            qp, kp = ops.from_numpy(np.array([n_kv - 1], np.int32)), ops.from_numpy(np.arange(n_kv, dtype=np.int32))

            def call(i: int) -> None:
                ops.attention(q, k, v, qp, kp, n_kv, 0.088)
        elif what == "quant_q8":
            def call(i: int) -> None:
                x.q8 = None
                ops._q8(x)
        elif what == "rms_norm":
            def call(i: int) -> None:
                u = ops.dev.uniform("IIIf", D, rows, 1, 1e-6)
                ops._run("rms_norm", u, [x.buf, w.buf, ops._new((rows, D)).buf], (rows, 1, 1))
        else:
            q8 = what.endswith("q8")

            def call(i: int) -> None:
                ops.matvec_q8 = q8
                ops._norm(x, x if "add" in what else None, w, 1e-6, ops._new((rows, D)), ops._new((rows, D)))
                ops.matvec_q8 = True
        self.rows.append({"shape": f"{what} {rows}x{D}", "kernel": what, "N": rows, "K": D, "T": rows,
                          "us": self.gpu_us(call), "ok": True})

    def summary_line(self, label: str) -> str:
        rs = [r for r in self.rows if r.get("shape") == label and "us" in r and r["T"] == 1]
        out = [label + ":"]
        for kernel in sorted({r["kernel"] for r in rs}):
            k = sorted((r for r in rs if r["kernel"] == kernel), key=lambda r: r["us"])
            d = next((r for r in k if r["default"]), None)
            bad = sum(not r["ok"] for r in k)
            out.append(f"  {kernel:10s} default {_fmt(d)}  best {_fmt(k[0])}  next {', '.join(_fmt(r) for r in k[1:4])}"
                       + (f"  [{bad} FAILED CHECK]" if bad else ""))
        for T in (2, 4):
            k = [r for r in self.rows if r.get("shape") == label and r.get("T") == T and "us" in r]
            out += [f"  {r['kernel']:10s} T={T} {_fmt(r)}" for r in k]
        return "\n".join(out)


def _fmt(r: dict | None) -> str:
    if r is None:
        return "-"
    return (f"{_cfg(r)} {r['us']:.1f} us {r['GBps']:.0f} GB/s"
            + ("" if r["ok"] else f" ERR {r.get('err')}"))


def _cfg(r: dict) -> str:
    return f"{tuple(r['cfg'])}{' xs' if r.get('xs') else ''}"


def _q8(x: np.ndarray) -> np.ndarray:
    """x in blocks of 32 as int8 codes times max|x| / 127 (what the mvq kernels read, lib/q8.wgsl)."""
    b = x.reshape(-1, 32)
    amax = np.abs(b).max(axis=1, keepdims=True)
    inv = np.where(amax > 0, np.float32(127.0) / np.maximum(amax, 1e-30), np.float32(0.0)).astype(np.float32)
    return (np.round(b * inv) * (amax / np.float32(127.0))).astype(np.float32).reshape(x.shape)


def per_token(rows: list[dict]) -> dict[str, Any]:
    """Matvec GPU ms of one decode token: defaults (f32 / q8), the best q8 config per shape, and the best
    single config per q8 kernel (the default to pick); mvq_glu configs without 8-bit output pay for a
    quant_q8 of their output."""
    quant = {r["K"]: r["us"] for r in rows if r["kernel"] == "quant_q8"}
    one = [r for r in rows if r.get("T") == 1 and "us" in r and r["ok"] and "uses" in r]
    shapes = {(r["shape"], r["uses"]) for r in one}

    def cost(r: dict) -> float:
        return r["us"] + (quant.get(r["N"], 0.0) if r["kernel"] == "mvq_glu" and not r["q8_out"] else 0.0)

    def total(pick: Any) -> float:
        out = 0.0
        for label, uses in shapes:
            c = [cost(r) for r in one if r["shape"] == label and pick(r)]
            out += uses * min(c) if c else float("nan")
        return out / 1e3
    out: dict[str, Any] = {
        "f32 default": total(lambda r: r["kernel"].startswith("matvec") and r["default"]),
        "q8 default": total(lambda r: r["kernel"].startswith("mvq") and r["default"]),
        "q8 best per shape": total(lambda r: r["kernel"].startswith("mvq"))}
    def single(kernel: str, key: tuple) -> dict[str, float]:
        """shape -> cost of one config of a kernel as VulkanOps runs it: an XS config whose rows do not
        fit the workgroup memory at a shape (no row) runs without XS there."""
        c = {r["shape"]: cost(r) for r in one if r["kernel"] == kernel and _key(r) == (key[0], False)}
        c.update({r["shape"]: cost(r) for r in one if r["kernel"] == kernel and _key(r) == key})
        return c
    best, picked = {}, {}
    for kernel in ("mvq", "mvq_glu"):
        ks = {(r["shape"], r["uses"]) for r in one if r["kernel"] == kernel}
        scored = []
        for key in {_key(r) for r in one if r["kernel"] == kernel}:
            c = single(kernel, key)
            if len(c) == len(ks):
                scored.append((sum(uses * c[label] for label, uses in ks), key))
        if scored:
            best[kernel] = min(scored)[1]
            picked.update(single(kernel, best[kernel]))
    out["q8 best single config"] = sum(uses * picked.get(label, float("nan")) for label, uses in shapes) / 1e3
    out["best configs"] = {k: [*v[0], v[1]] for k, v in best.items()}  # L, R, S, xs
    return out


def _key(r: dict) -> tuple:
    """A q8 config as the kernel ran it: (L, R, S) and XS (asked for and fitting, else a row without it)."""
    return tuple(r["cfg"]), bool(r.get("xs"))


def table(rows: list[dict]) -> str:
    """Per shape (1 token): the default config's time and the best one's, over the q8 kernels (and the f32
    default for reference); the per-token totals of per_token below it."""
    one = [r for r in rows if r.get("T") == 1 and "us" in r and r["ok"] and "uses" in r]
    lines = [f"{'shape':24s} {'uses':>4s}  {'f32 default':>11s}  {'q8 default':28s}  {'q8 best':28s}  gain"]
    for label in dict.fromkeys(r["shape"] for r in one):
        rs = [r for r in one if r["shape"] == label]
        f32 = next((r for r in rs if r["kernel"].startswith("matvec") and r["default"]), None)
        q8 = sorted((r for r in rs if r["kernel"].startswith("mvq")), key=lambda r: r["us"])
        d = next((r for r in q8 if r["default"]), None)
        b = q8[0] if q8 else None

        def cell(r: dict | None) -> str:
            return "-" if r is None else f"{r['us']:6.2f} us {_cfg(r)}"
        gain = f"{d['us'] / b['us']:.2f}x" if d and b else "-"
        lines.append(f"{label:24s} {rs[0]['uses']:4d}  {f32['us'] if f32 else float('nan'):8.2f} us  "
                     f"{cell(d):28s}  {cell(b):28s}  {gain}")
    tok = per_token(rows)
    lines.append("matvec GPU ms per Qwen3-8B decode token: "
                 + ", ".join(f"{k} {v:.3f}" for k, v in tok.items() if k != "best configs")
                 + f"; best single configs (L, R, S, xs) {tok['best configs']}"
                 + f" (defaults {MATVEC_CONFIG}, xs {MATVEC_XS})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="small shapes and few configs (lavapipe)")
    ap.add_argument("--allow-cpu", action="store_true", help="take a CPU adapter (lavapipe) too")
    ap.add_argument("--reps", type=int, default=None,
                    help="repeats per variant (chain: medians of this many; timestamps: dispatches timed)")
    ap.add_argument("--chain", type=int, default=None,
                    help="dispatches per timed submit (default 64, 16 with --small)")
    ap.add_argument("--timestamps", action="store_true", help="time with GPU timestamps around each dispatch")
    ap.add_argument("--no-xs", action="store_true", help="skip the XS (staged activations) variants")
    ap.add_argument("--table", metavar="JSON", help="only print the summary table of a written JSON (a cut-short run)")
    ap.add_argument("--json", help="write the rows here (default: $OUT/vulkan_matvec_sweep.json if OUT is set)")
    a = ap.parse_args(argv)
    if a.table:
        with open(a.table) as f:
            print(table(json.load(f)["rows"]))
        return 0
    t0 = time.perf_counter()
    ops = VulkanOps(allow_cpu_adapter=a.allow_cpu, submit_every=0)  # chain: one submit per timing
    dev = ops.dev
    print(f"adapter {dev.info.get('device')} ({dev.info.get('adapter_type')}), subgroups {dev.subgroups} "
          f"(min size {dev.subgroup_min}), features {dev.features}", flush=True)
    if a.timestamps and "timestamp-query-inside-passes" not in dev.features:
        raise SystemExit("this adapter cannot write timestamps inside compute passes")
    chain = 0 if a.timestamps else max(2, a.chain or (16 if a.small else 64))
    reps = a.reps or ((3 if a.small else 20) if a.timestamps else (3 if a.small else 5))
    b = Bench(ops, reps, (1 << 20) if a.small else (192 << 20), chain)
    b.xs = (False,) if a.no_xs else (False, True)
    path = a.json or (os.path.join(os.environ["OUT"], "vulkan_matvec_sweep.json") if os.environ.get("OUT") else None)

    def save() -> None:  # after every shape: a run cut short still leaves its rows
        if path:
            with open(path, "w") as f:
                json.dump({"adapter": dev.info.get("device"), "subgroups": dev.subgroups, "features": dev.features,
                           "timing": f"chain {chain}" if chain else "timestamps", "reps": reps,
                           "defaults": MATVEC_CONFIG, "xs_defaults": MATVEC_XS, "per_token_ms": per_token(b.rows),
                           "rows": b.rows}, f, indent=1)
    D = 512 if a.small else 4096
    for what in ("rms_norm", "rms_norm4", "rms_norm4_q8", "add_rms_norm4_q8", "quant_q8", "attention@256",
                 "attention@1024"):
        b.aux(what, D, 1)
    print(f"row norms, quantization (1 row of {D}), decode attention (Qwen3-8B heads, n_kv cells): "
          + ", ".join(f"{r['kernel']} {r['us']:.1f} us" for r in b.rows), flush=True)
    for glu, t, N, K, uses in (SMALL if a.small else SHAPES):
        configs = SMALL_CONFIGS if a.small else (GLU_CONFIGS if glu else MVQ_CONFIGS)
        b.shape(glu, t, N, K, uses, configs, F32_CONFIGS[:1] if a.small else F32_CONFIGS)
        save()
    bad = [r for r in b.rows if not r["ok"]]
    print(f"\n{'chained x' + str(b.chain) if b.chain else 'timestamps'}, per dispatch:\n{table(b.rows)}")
    print(f"{len(b.rows)} rows, {len(bad)} failed their check or did not run; {time.perf_counter() - t0:.0f} s")
    if path:
        print(f"wrote {path}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
