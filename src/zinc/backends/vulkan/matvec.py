"""The decode matvecs of the Vulkan backend (a mixin of `VulkanOps`): products of one to MVQ_ROWS
activation rows with a Q4_K / Q6_K weight, on f32 activations (`matvec.wgsl`, `matvec_glu.wgsl`, one
token) or on 8-bit ones (`mvq.wgsl`, `mvq_glu.wgsl`, lib/q8.wgsl) with integer dot products; their
configurations (L lanes per row, R rows per lane, S row slots per workgroup; per kernel, optionally per
shape, optionally with the activation rows staged in workgroup memory) and the pairing of two products
of one input into one dispatch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zinc.backends.vulkan.device import grid, shader_source
from zinc.backends.vulkan.weights import MATVEC, VkWeight, matvec_src, mvq_src

if TYPE_CHECKING:
    from zinc.backends.vulkan.ops import VkArray

# decode matvec shape per kernel: L lanes per row, R rows per lane, S row slots per workgroup (matvec*:
# f32 activations, one token; mvq*: 8-bit activations, up to MVQ_ROWS tokens; mvq, mvq_glu: the best
# single configs over Qwen3-8B's decode shapes on an H200, bench/vulkan_matvec_sweep.py)
MATVEC_CONFIG = {"matvec": (32, 1, 2), "matvec_glu": (32, 1, 2), "mvq": (32, 1, 8), "mvq_glu": (16, 2, 16)}
# mvq kernels that first stage their activation rows in workgroup memory (the L lanes of every row slot
# then read them there, not from global memory), where the workgroup-memory limit allows (_MVQ_X)
MATVEC_XS = {"mvq": False, "mvq_glu": False}
# (kernel, weight type, N, K) -> (L, R, S, XS) where one decode shape has its own best mvq config
# (N: the dispatch's rows); H200 through NVIDIA's Vulkan driver, bench/vulkan_matvec_sweep.py
MVQ_SHAPES: dict[tuple[str, str, int, int], tuple[int, int, int, bool]] = {}
# how the mvq kernels read activation rows t0 .. t0 + NT of XQ (row length XROW vec4): xq(i) is vec4 i
# and x_stage(lid) the index where row t0 starts; XS: all threads copy the rows to workgroup memory
# (coalesced, then a barrier) and xq reads that copy
_MVQ_X = {
    False: "fn xq(i: u32) -> vec4<u32> { return XQ[i]; }\n"
           "fn x_stage(lid: u32) -> u32 { return P.t0 * XROW; }",
    True: "var<workgroup> xsh: array<vec4<u32>, NT * XROW>;\n"
          "fn xq(i: u32) -> vec4<u32> { return xsh[i]; }\n"
          "fn x_stage(lid: u32) -> u32 {\n"
          "    for (var i = lid; i < NT * XROW; i += WG) { xsh[i] = XQ[P.t0 * XROW + i]; }\n"
          "    workgroupBarrier();\n"
          "    return 0u;\n"
          "}"}
MVQ_ROWS = 4


def _q8_row_words(K: int) -> int:
    """Words of one row of K values as 8-bit activations (lib/q8.wgsl)."""
    return K // 4 + K // 8


class MatvecOps:
    """The matvec methods of `VulkanOps` (which holds dev, matvec, matvec_xs, matvec_shapes, _wg_bytes,
    matvec_q8, _run, the dummy bindings and _mv_pending)."""

    def _matvec(self, kernel: str, x: VkArray, ws: tuple[VkWeight, ...], out: VkArray, bias: Any,
                subs: dict[str, str]) -> None:
        """y = W @ x for one token with the vec4 matvec kernel (matvec_glu: ws = (gate, up))."""
        w = ws[0]
        N, K = w.shape[0], w.shape[-1]
        L, R, S = self.matvec[kernel]
        subs = {**subs, **self._mv_subs((L, R, S)), "UNIT": matvec_src(w)}
        if len(ws) > 1:
            subs["UNIT2"] = matvec_src(ws[1], "2")
        u = self.dev.uniform("IIIII", N, K, w.row_words // 4, K // 64, int(bias is not None))
        bufs = [x.buf, *(v.buf for v in ws), out._buf]
        if len(ws) == 1:
            bufs.append(bias.buf if bias is not None else self._dummy)
        self._run(kernel, u, bufs, grid(-(-N // (R * S))), subs)

    def _mvq_ok(self, x: VkArray, T: int, ws: tuple[VkWeight, ...]) -> bool:
        """The 8-bit-activation matvec applies: f32 rows, weights of one type with a kernel."""
        w = ws[0]
        return (self.matvec_q8 and x.dtype == "f32" and w.ggml_type in MATVEC
                and len(w.shape) == 2 and all(v.ggml_type == w.ggml_type and v.row_words == w.row_words for v in ws))

    def _q8(self, x: VkArray) -> Any:
        """x's 8-bit activations (lib/q8.wgsl), quantized now unless its producer wrote them."""
        K = x.shape[-1]
        if x.q8 is None or x.q8[0] != K:
            T = x.size // K
            x.q8 = (K, self.dev.buffer(4 * T * _q8_row_words(K)))
            self._run("quant_q8", self.dev.uniform("II", T, K), [x.buf, x.q8[1]], grid(-(-T * K // 32 // 64)))
        return x.q8[1]

    def _mv_cfg(self, kernel: str, w: VkWeight, N: int, pair: bool = False) -> tuple[int, int, int, bool]:
        """(L, R, S, XS) of an mvq dispatch of N rows of w's type: MVQ_SHAPES' entry, else the kernel's
        (a pair of weights keeps the kernel's: its split must fall on a workgroup boundary, _mvq_pair)."""
        hit = None if pair else self.matvec_shapes.get((kernel, w.ggml_type.name, N, w.shape[-1]))
        return hit if hit is not None else (*self.matvec[kernel], self.matvec_xs.get(kernel, False))

    def _mv_sg(self, L: int) -> bool:
        """Row sums of L lanes reduce with subgroup shuffles (lib/mv_reduce_sg.wgsl), not in workgroup memory."""
        return self.dev.subgroups and self.dev.subgroup_min >= L

    def _mvq_xs(self, kernel: str, cfg: tuple[int, int, int, bool], K: int, NT: int) -> bool:
        """Stage the NT activation rows in workgroup memory (cfg's XS) when the adapter has room for
        them next to the kernel's other workgroup arrays (the reduction's, mvq_glu's output rows)."""
        L, R, S, xs = cfg
        if not xs:
            return False
        used = (0 if self._mv_sg(L) else 4 * L * S * R * NT) + (4 * NT * S * R if kernel == "mvq_glu" else 0)
        return used + 16 * NT * (K // 16 + K // 32) <= self._wg_bytes

    def _mv_subs(self, cfg: tuple[int, ...]) -> dict[str, str]:
        L, R, S = cfg[:3]
        sg = self._mv_sg(L)
        return {"L": str(L), "R": str(R), "S": str(S), "WG": str(L * S),
                "REDUCE": shader_source(f"lib/mv_reduce_{'sg' if sg else 'wg'}.wgsl"),
                "SG_ARGS": (", @builtin(subgroup_id) sg_id: u32, @builtin(subgroup_size) sg_size: u32, "
                            "@builtin(subgroup_invocation_id) sg_lane: u32") if sg else "",
                "THREAD": "sg_id * sg_size + sg_lane" if sg else "lid"}

    def _mvq(self, kernel: str, x: VkArray, ws: tuple[VkWeight, ...], outs: list[VkArray], bias: Any,
             subs: dict[str, str]) -> None:
        """y = W @ x on 8-bit activations into outs (mvq: up to 3 arrays that split y's columns, or
        ws = (w, w2) of one type and outs = (x @ w.T, x @ w2.T); mvq_glu: ws = (gate, up), and outs[0].q8
        gets y's 8-bit activations when R * S % 32 == 0); one dispatch per MVQ_ROWS tokens, each staging
        its activation rows in workgroup memory first where matvec_xs says so and they fit (_mvq_xs)."""
        w = ws[0]
        N, K = w.shape
        T = x.size // K
        xq = self._q8(x)
        out = outs[0]
        glu = kernel == "mvq_glu"
        bufs = [xq, *(v.buf for v in ws[:1 + glu]), out._buf]
        widths = [o.shape[-1] for o in outs] + [0, 0]
        pair = len(ws) > 1 and not glu
        nw1, N = N, N + (ws[1].shape[0] if pair else 0)  # rows of w, of the dispatch
        cfg = self._mv_cfg(kernel, w, N, pair)
        L, R, S = cfg[:3]
        subs = {**subs, **self._mv_subs(cfg), "K": str(K), "UNITS": str(K // 64), "UNIT": mvq_src(w)}
        if glu:
            qout = S * R % 32 == 0 and N % 256 == 0
            subs.update(UNIT2=mvq_src(ws[1], "2"), QOUT="true" if qout else "false")
            out.q8 = (N, self.dev.buffer(4 * T * _q8_row_words(N))) if qout else None
            bufs.append(out.q8[1] if qout else self._dummy_w)
        else:
            subs["UNIT2"] = mvq_src(w, "2")
            bufs += [bias.buf if bias is not None else self._dummy, *(o._buf for o in outs[1:]),
                     *self._dummy_ws[len(outs) - 1:], ws[1].buf if len(ws) > 1 else self._dummy]
        for t0 in range(0, T, MVQ_ROWS):
            if glu:
                u = self.dev.uniform("III", N, w.row_words // 4, t0)
            else:
                u = self.dev.uniform("IIIIIII", N, w.row_words // 4, int(bias is not None), widths[0],
                                     widths[0] + widths[1], t0, nw1)
            NT = min(MVQ_ROWS, T - t0)
            xsrc = _MVQ_X[self._mvq_xs(kernel, cfg, K, NT)]
            self._run(kernel, u, bufs, grid(-(-N // (R * S))), {**subs, "NT": str(NT), "XSRC": xsrc})

    def _mvq_pair(self, x: VkArray, w: VkWeight, out: VkArray) -> None:
        """The deferred product x @ w.T into out, joined by another pending one of the same input and
        weight type (a layer's K projection next to its Q where V has another type): one dispatch."""
        L, R, S = self.matvec["mvq"]
        for i, (ref, xref, w2, oref) in enumerate(self._mv_pending):
            y2 = ref()  # while y2 is pending (not y itself: consumed) its closure holds its input and target
            if (getattr(y2, "pending", None) is not None and xref() is x and w2.ggml_type == w.ggml_type
                    and w2.row_words == w.row_words and (w.shape[0] % (R * S) == 0 or w2.shape[0] % (R * S) == 0)):
                first = w.shape[0] % (R * S) == 0  # the first weight's rows fill whole workgroups
                pair, outs = ((w, w2), [out, oref()]) if first else ((w2, w), [oref(), out])
                y2.pending = y2.lazy = None
                del self._mv_pending[i]
                self._mvq("mvq", x, pair, outs, None, {})
                return
        self._mvq("mvq", x, (w,), [out], None, {})
