"""What one dispatch costs on a Vulkan adapter through wgpu, apart from its work.

`python bench/vulkan_dispatch_cost.py` (`--allow-cpu` for lavapipe). Records M dispatches of a tiny
kernel (y = 0.5 x + 1 over G workgroups of 256) into one command buffer, submits it and waits; the
cost per dispatch is (wall(M) - wall(1)) / (M - 1), median of several repeats. Cases:
- chain: each dispatch reads the previous one's output (ping-pong: wgpu puts a barrier between them);
- independent: every dispatch reads one input and writes its own buffer (no data dependency);
- own pass: the chain with every dispatch in its own compute pass;
- no-write chain: dispatches that only read (wgpu has nothing to order).
Prints a table; writes $OUT/vulkan_dispatch_cost.json when OUT is set.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from zinc.backends.vulkan.device import Device

SRC = """
@group(0) @binding(0) var<storage, read> X: array<f32>;
@group(0) @binding(1) var<storage, read_write> Y: array<f32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if (i < arrayLength(&Y)) { Y[i] = X[i] * 0.5 + 1.0; }
}
"""
SRC_RO = """
@group(0) @binding(0) var<storage, read> X: array<f32>;
@group(0) @binding(1) var<storage, read> Y: array<f32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if (i > 1u << 30u) { let v = X[i] + Y[i]; }
}
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--allow-cpu", action="store_true")
    ap.add_argument("-m", type=int, default=300)
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args()
    dev = Device(allow_cpu_adapter=a.allow_cpu)
    d = dev.device
    pipes = {}
    for name, src in (("rw", SRC), ("ro", SRC_RO)):
        mod = d.create_shader_module(code=src)
        pipes[name] = d.create_compute_pipeline(layout="auto", compute={"module": mod, "entry_point": "main"})
    rows = []
    for G in (1, 132, 1024):
        n = G * 256
        bufs = [dev.buffer_from(np.random.default_rng(i).standard_normal(n).astype(np.float32)) for i in range(a.m + 1)]

        def bg(p, x, y):
            return d.create_bind_group(layout=pipes[p].get_bind_group_layout(0),
                                       entries=[{"binding": 0, "resource": {"buffer": x}},
                                                {"binding": 1, "resource": {"buffer": y}}])
        chain = [bg("rw", bufs[i % 2], bufs[1 - i % 2]) for i in range(2)]
        indep = [bg("rw", bufs[0], bufs[1 + i]) for i in range(a.m)]
        ro = [bg("ro", bufs[0], bufs[1])]
        cases = {"chain": ("rw", lambda i: chain[i % 2], False), "independent": ("rw", lambda i: indep[i], False),
                 "own pass": ("rw", lambda i: chain[i % 2], True), "no-write": ("ro", lambda i: ro[0], False)}
        for case, (p, group, own) in cases.items():
            def run(m: int) -> float:
                enc = d.create_command_encoder()
                cp = None
                for i in range(m):
                    if cp is None:
                        cp = enc.begin_compute_pass()
                    cp.set_pipeline(pipes[p])
                    cp.set_bind_group(0, group(i))
                    cp.dispatch_workgroups(G, 1, 1)
                    if own:
                        cp.end()
                        cp = None
                if cp is not None:
                    cp.end()
                cb = enc.finish()
                t0 = time.perf_counter()
                d.queue.submit([cb])
                d.queue.read_buffer(bufs[0], 0, 4)  # waits for the submit (wgpu 0.32's work-done wait is broken)
                return time.perf_counter() - t0
            for _ in range(2):
                run(a.m)
                run(1)
            big = float(np.median([run(a.m) for _ in range(a.reps)]))
            one = float(np.median([run(1) for _ in range(a.reps)]))
            us = (big - one) / (a.m - 1) * 1e6
            rows.append({"case": case, "groups": G, "dispatches": a.m, "us_per_dispatch": round(us, 3),
                         "wall_ms": round(big * 1e3, 3), "one_ms": round(one * 1e3, 3)})
            print(f"{case:12s} G={G:5d}: {us:6.2f} us/dispatch (wall {big * 1e3:.2f} ms for {a.m}, one {one * 1e3:.3f} ms)",
                  flush=True)
    out = os.environ.get("OUT")
    if out:
        with open(os.path.join(out, "vulkan_dispatch_cost.json"), "w") as f:
            json.dump({"adapter": dev.info.get("device"), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
