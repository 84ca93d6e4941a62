"""Is WGSL's dot4I8Packed one instruction on this adapter, or unpacked into byte multiplies?

`python bench/vulkan_dot4_check.py` (`--allow-cpu` for lavapipe). Times a dependent chain of N steps per
thread (many threads, so the time is issue/latency bound, not memory bound) for:
- dot4: x = dot4I8Packed(x ^ c, k) (the 8-bit matvecs' inner product);
- manual: the same sum written as four byte extracts and multiplies;
- imad: x = x * 3 + c (one integer multiply-add: the floor).
If dot4 costs about what imad does, it is native (SDot); about manual's, it is emulated. Prints ns per step.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from zinc.backends.vulkan.device import Device

BODY = {
    "dot4": "x = u32(dot4I8Packed(x ^ c, k));",
    "manual": ("let a = x ^ c; x = u32(((i32(a << 24u) >> 24u) * (i32(k << 24u) >> 24u))"
               " + ((i32(a << 16u) >> 24u) * (i32(k << 16u) >> 24u))"
               " + ((i32(a << 8u) >> 24u) * (i32(k << 8u) >> 24u)) + ((i32(a) >> 24u) * (i32(k) >> 24u)));"),
    "imad": "x = x * 3u + c;",
}
SRC = """
@group(0) @binding(0) var<storage, read_write> Y: array<u32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    var x = g.x * 2654435761u;
    let c = Y[g.x % 64u] | 0x01010101u;
    let k = 0x05fb7f03u ^ g.x;
    for (var i = 0u; i < STEPSu; i++) {
        BODY
    }
    Y[g.x] = x;
}
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--allow-cpu", action="store_true")
    ap.add_argument("--steps", type=int, default=4096)
    ap.add_argument("--groups", type=int, default=1056)
    a = ap.parse_args()
    dev = Device(allow_cpu_adapter=a.allow_cpu)
    d = dev.device
    buf = dev.buffer_from(np.arange(a.groups * 256, dtype=np.uint32))
    for name, body in BODY.items():
        code = SRC.replace("STEPS", str(a.steps)).replace("BODY", body)
        p = d.create_compute_pipeline(layout="auto", compute={"module": d.create_shader_module(code=code),
                                                               "entry_point": "main"})
        bg = d.create_bind_group(layout=p.get_bind_group_layout(0), entries=[{"binding": 0, "resource": {"buffer": buf}}])

        def run(n: int) -> float:
            enc = d.create_command_encoder()
            cp = enc.begin_compute_pass()
            cp.set_pipeline(p)
            cp.set_bind_group(0, bg)
            for _ in range(n):
                cp.dispatch_workgroups(a.groups, 1, 1)
            cp.end()
            t0 = time.perf_counter()
            d.queue.submit([enc.finish()])
            d.queue.read_buffer(buf, 0, 4)
            return time.perf_counter() - t0
        run(2)
        t = float(np.median([run(8) for _ in range(5)])) / 8
        ns = t / a.steps * 1e9
        print(f"{name:7s}: {t * 1e6:9.1f} us per dispatch, {ns:7.2f} ns per chained step", flush=True)


if __name__ == "__main__":
    main()
