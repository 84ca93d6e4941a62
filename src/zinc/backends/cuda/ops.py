"""The CUDA backend: torch tensors on one GPU, Triton kernels for the hot ops, CUDA-graph decode.

Activations are f32 torch tensors on the device. Weights are `CudaWeight`s (raw GGUF blocks repacked at upload). For
a few rows (decode) `matmul` of a Q4_K / Q6_K / Q8_0 weight is the integer dot-product matvec of `kernels/mmvq` on
8-bit activations (Q4_K and Q6_K: its rows-as-streams form, `kernels/mmvs`; the activations quantized by the RMS
norm that produced them, or on first use; `matmul_glu` is one kernel for gate, up and the GLU); other types take the
generic dequant-matvec of `kernels/matvec_generic` (with exact=True a Q8_0 weight takes its `q8_matvec` on the f32
activations); for 5-128 rows (a batched decode step, a short prompt) a type the tiles read is one GEMM over
dequantized tiles (`_gemm_tiles`), for more (prefill) the weight dequantized to f16 for a tensor-core matmul.
rms_norm, rope (fused with the per-head norm and the KV write), the GLUs and attention (split-K for decode, flash
for prefill) are Triton kernels; for a few tokens `rope_qk_attention` is the decode attention's first kernel doing
the norms, rope and KV write too. Everything else is a torch op on the device: no op falls back to the host. KV
cells are f16 (default), f32 or q8_0 (`Q8Cells`: written quantized by the KV-write kernels, read dequantized by both
attention kernels; `kernels/kvq8`). A MoE layer's shared expert is also uploaded as one more expert of its routed
stacks where it has their types and shapes (`models.layers.fold_shared_experts`): in a decode step it runs in their
launches, picked for every token by `router_topk_shared`. Expert matmuls read only the selected experts: for a few
tokens one matvec over (token, expert) pairs with the ids read on the device (also for the prompts of many small
experts); for the prompts of fewer, bigger experts one grouped GEMM launch (`kmoe.experts_gemm`: the pairs grouped
by expert on the device, each expert's weight tiles dequantized once per block of its pairs), or for types it does
not read a loop over the experts hit (dequantize, GEMM). Recurrent layers: `kernels/recurrent.py` (a step's conv1d
and token-by-token delta rule are one kernel each, the chunked prefill form torch code); the router's top-k and the
experts' weighted sum are one kernel each (`kernels/moe.py`).

`run_step` (called by `Model.forward`) replays a CUDA graph of the whole single-token step, or of a prompt chunk
whose length came before (`graph.StepGraphs`); while a graph is being captured, `kv_write` takes each cell from the
position (pos % cells, as `KVCache.begin` does) and attention reads its extent from the positions, so the captured
step is right at every later position. `greedy_steps` (`Model.greedy`) replays a graph of the step plus its argmax,
which feeds the next replay: no host round trip per token; `loop_steps` (`Model.start_seqs`) the same, or with each
row's token drawn by its request's sampler settings on the device (`kernels/sample.py`), without waiting for the
ids.
"""

from __future__ import annotations

import weakref
from typing import Any, Iterable

import numpy as np
import torch
import torch.nn.functional as F
import triton

from zinc.backends.base import BaseOps, QTensor, RopeParams
from zinc.backends.cuda.kernels import attention as kattn
from zinc.backends.cuda.kernels import elementwise as kel
from zinc.backends.cuda.kernels import flash as kflash
from zinc.backends.cuda.kernels import mmvq
from zinc.backends.cuda.kernels import moe as kmoe
from zinc.backends.cuda.kernels import matvec_generic as kgm
from zinc.backends.cuda.kernels import recurrent as krec
from zinc.backends.cuda.kernels import seqs as kseqs
from zinc.backends.cuda.kernels import quant as kq
from zinc.backends.cuda.weights import SUPPORTED, CudaWeight
from zinc.engine.cache import LayerKV, LayerState
from zinc.gguf.constants import GGMLType

_DTYPES = {"f32": torch.float32, "f16": torch.float16, "i32": torch.int32, "i8": torch.int8}
MATVEC_MAX_ROWS = 4  # up to this many rows a matmul is a fused dequant-matvec, past it dequant + GEMM
# from MATVEC_MAX_ROWS + 1 to this many rows a matmul of a type the tiles read (`kq.SUB64`: Q4_K, Q6_K, Q8_0,
# MXFP4) is one fused GEMM over dequantized tiles (`kmoe.experts_gemm` with one expert: the weights read once a block
# of 64 rows), not a whole dequantized copy of the weight and a GEMM: a batched decode step of many sequences, a short
# prompt
GEMM_TILES_MAX_ROWS = 128
# from this many tokens a MoE step's expert matvecs launch their (token, expert) pairs expert by expert
# (`kmoe.expert_order`), an expert's later pairs reading its rows from L2. H100, Qwen3.5-35B-A3B, 64 sequences (each
# hit expert read ~2.3 times a step in token order): step 23.248 -> 22.358 ms, gate + up matvecs 5.90 -> 4.98 ms,
# the ranking kernel 5.3 us a layer (bench/RESULTS.md, session 43; session 42's order through align_pairs took 35 us a
# layer and lost). Fewer tokens share fewer experts while the ranking costs the same, so it starts at half that
# measured step (unmeasured below). Settable for A/B runs (bench/cuda_step_profile.py --expert-order-min)
EXPERT_ORDER_MIN_TOKENS = 32
# `_gemm_tiles`' K-splits of plain weights summed in the launch by each tile's last split (`kmoe.experts_gemm` sems),
# not by a sum launch after it: off (H100, 64-sequence Qwen3-8B step, against torch's sums: 10,334 -> 10,456 us,
# session 44; 9,049 -> 9,221, session 45). The GLU pair's splits are always summed (and activated) in the launch
SPLIT_SUMS_IN_LAUNCH = False
DENSE_MATVEC_MAX = 1 << 24  # float weights up to this many values take `kgm.dense_matvec` at those rows
QX_KEEP = 2  # quantized matmul inputs remembered (CudaOps._quantized)
TUNED_MATVEC = frozenset({GGMLType.Q4_K, GGMLType.Q6_K, GGMLType.Q8_0})  # kernels/mmvq.py; others: generic
STREAM_TYPES = frozenset({GGMLType.Q4_K, GGMLType.Q6_K})  # kernels/mmvs.py (also two weights in one launch)
MMVQ_EXPERTS = TUNED_MATVEC | {GGMLType.MXFP4}  # expert types of mmvq.matvec_experts; others: generic
DECODE_ATTN_MAX_ROWS = 16
# decode attention: (caches of fewer cells than this, splits of the cells, cells per step of a split[, pipeline
# stages[, warps]]); `kattn.STAGES` and the warps of `kattn.tiles` where not given
# (H200: bench/cuda_attn_sweep.py; 2 splits under 256 cells: bench/cuda_attn_fused.py and tg128, session 22; 4 of
# 32 cells under 256 with the decode's programmatic dependent launches: H100 replay 2,292.4 -> 2,282.2 us, session 25;
# with one f16 operand each, H200: 16 of 64 cells for 2,048-8,192 cells, tg128@4096 465.8 -> 469.8, and 16 of 128
# past 8,192, tg128@16384 391.1 -> 393.5, session 26; under 256 cells 8 of 16 cells with the loop unrolled, stages
# 0: H100 replay 2,233.5 -> 2,214.9 us, tg128 446.4 -> 450.1; unrolled rows lost at depth 4096 and 16384; 16 of 64
# cells for 256-2,047 cells, H100 tg128@1024 426.2 -> 429.8, session 30; under 256 cells 4 of 32 unrolled instead
# (the split boundaries of session 26's row, so its results bit for bit: 8 of 16 turned qwen35-tiny Q8_0's 8-bit near
# tie at margin 0.055 into a check_families miss), H100 replay 2,233 -> 2,224 us (8 of 16: 2,212); past 8,192 cells
# 16 of 64 cells at 3 stages, H100 tg128@16384 324.7-324.9 -> 329.3-329.8, session 31, not yet measured on an H200)
ATTN_SPLITS = [(256, 4, 32, 0), (2048, 16, 64), (8192, 16, 64), (1 << 62, 16, 64, 3)]
# the rows of cards whose memory streams at least WIDE_BANDWIDTH bytes a second (peak, `peak_bandwidth`): past 8,192
# cells 16 splits of 128 cells, as session 26 chose on the H200 (H200, Qwen3-8B: tg128@16384 388.0 -> 393.5 in A/B
# against the H100's 64 cells at 3 stages, zinc bench 388.5 -> 394.4; H100 the other way, 324.8 -> 329.5; session 33)
WIDE_BANDWIDTH = 4e12
ATTN_SPLITS_WIDE = [(256, 4, 32, 0), (2048, 16, 64), (8192, 16, 64), (1 << 62, 16, 128)]
# captured decode steps launch the quantize and streams-matvec kernels as programmatic dependent launches (compute
# capability 9+): each lets the next launch at its start, and a matvec issues its first weight loads before it waits
# (griddepcontrol) for the launch before it to finish. H100, Qwen3-8B: tg128 412.8 -> 428.6, @16384 302.2 -> 311.9
# (bench/RESULTS.md, session 24); the decode attention's kernels as such launches too lost 3.4 tok/s, so they do not
PDL = True
# (wait, trigger) of the decode attention's split and combine launches where PDL applies (`kattn.decode_attention`):
# the split launches plainly and lets the combine launch once its programs have left their loop (trigger 3); the
# combine waits before any load and lets the output projection launch at its start, so both stand ready, the output
# projection's first weights loaded, while the splits store and exit (H100, Qwen3-8B, tg128@16384 329.5-329.8 ->
# 330.3-330.4, @4096 403.1 -> 404.1; the split's trigger at its start instead: 312.7; bench/RESULTS.md, session 37).
# A cluster split takes the combine's trigger (`CLUSTER_TRIGGER`). Before: the combine launched plainly, triggering
# (H100: replay 2,318 -> 2,310 us; session 25); the split launched early, with or without its trigger, 2,327-2,356
# us (session 25); early with each split's first tile of cells loaded before its wait, 2,256 against 2,190 us
# (session 34); early behind a QKV projection triggering at its programs' end, 2,249 against 2,190 (session 35)
ATTN_PDL = ((0, 3), (1, 1))
# the decode attention's splits, where there are at most this many, as one thread-block cluster that merges them in
# place: no combine launch, the split letting the output projection launch after its loop (`kattn.decode_attention`).
# H100, Qwen3-8B: 4 splits (caches under 256 cells) replay 2,222.7 -> 2,190.0 us, tg128 448.5 -> 455.4; clusters of
# 16 splits lost at depth (tg128@1024 429.5 -> 406.4, @4096 401.4 -> 382.5, @16384 330.0 -> 311.8; session 33)
ATTN_CLUSTER = 4


PDL_NEEDS = "an NVIDIA GPU of compute capability 9 or later and a Triton with the launch_pdl launch option"


def pdl_available(device: torch.device) -> bool:
    """Whether launches on `device` can be programmatic dependent launches (`PDL`): they need `PDL_NEEDS`."""
    if device.type != "cuda" or not torch.cuda.is_available() or torch.cuda.get_device_capability(device)[0] < 9:
        return False
    try:
        from triton.backends.nvidia.compiler import CUDAOptions
    except ImportError:
        return False
    return "launch_pdl" in getattr(CUDAOptions, "__dataclass_fields__", {})


def peak_bandwidth(device: torch.device) -> float:
    """The card's peak memory bandwidth in bytes a second (double data rate over the bus), 0.0 where unknown."""
    if device.type != "cuda":
        return 0.0
    p = torch.cuda.get_device_properties(device)
    return 2e3 * getattr(p, "memory_clock_rate", 0) * getattr(p, "memory_bus_width", 0) / 8


def attention_config(cells: int, wide: bool = False) -> tuple[int, int, int, int | None]:
    """(splits, cells per step, stages, warps or None) of the decode attention over a cache of `cells` cells
    (wide: on a card of WIDE_BANDWIDTH)."""
    _, splits, bs, *rest = next(r for r in (ATTN_SPLITS_WIDE if wide else ATTN_SPLITS) if cells < r[0])
    return splits, bs, rest[0] if rest else kattn.STAGES, rest[1] if len(rest) > 1 else None


class CudaOps(BaseOps):
    """`zinc.backends.base.Ops` on torch + Triton. Options: device, kv_dtype, graphs, exact.

    exact=True keeps activations in f32 everywhere (matvecs on f32 activations, f32 GEMMs on f32
    dequantized weights, f32 attention operands): slower, for checks against the NumPy backend."""

    name = "cuda"
    kv_types = ("f16", "f32", "q8_0")
    fuse_projections = True  # load_weights stacks the projections of one input (models.layers.stack_groups)
    fold_shared_experts = MATVEC_MAX_ROWS  # and, for steps of that many rows, a shared expert into its layer's
    # routed stacks (models.layers.fold_shared_experts)

    def __init__(self, device: str | int | None = None, kv_dtype: str = "f16", graphs: bool = True,
                 exact: bool = False) -> None:
        self.device = torch.device(device if device is not None else "cuda")
        if self.device.type == "cuda":
            self.device_name = torch.cuda.get_device_name(self.device)
        else:
            self.device_name = str(self.device)
        if kv_dtype not in self.kv_types:
            raise ValueError(f"kv_dtype must be one of {', '.join(self.kv_types)}, got {kv_dtype!r}")
        self.kv_dtype = kv_dtype
        self.graphs_enabled = graphs
        self.exact = bool(exact)
        self.capturing = False
        self._wide = peak_bandwidth(self.device) >= WIDE_BANDWIDTH  # decode attention rows (attention_config)
        self._pdl_ok = pdl_available(self.device)
        self._rope: dict[tuple, tuple[torch.Tensor, float]] = {}
        self._graphs: Any = None
        self._qx: list[tuple] = []  # (x, its quantization) of the last QX_KEEP quantized matmul inputs
        self._x16: tuple | None = None  # (x, x in f16) of the last norm output of a tile GEMM's rows
        self._order: tuple | None = None  # (ids, `kmoe.expert_order` of them): `_expert_order`'s last
        self._dense_pairs: dict[tuple, tuple] = {}  # (rows, block) -> `_gemm_tiles`'s row blocks
        self._sems = torch.zeros(0, dtype=torch.int32, device=self.device)  # `_gemm_tiles`' split counters
        self._kv_rows: "weakref.WeakKeyDictionary[Any, np.ndarray]" = weakref.WeakKeyDictionary()  # kv_tables
        self._align: tuple | None = None  # (ids, (experts, block rows), kmoe.align_pairs of them)

    # -- memory ----------------------------------------------------------------------------------
    def upload(self, qt: QTensor) -> CudaWeight:
        return CudaWeight(qt, self.device)

    def from_numpy(self, a: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(np.ascontiguousarray(a)).to(self.device)

    def overwrite(self, dst: torch.Tensor, a: np.ndarray) -> torch.Tensor:
        """Copy `a` into `dst` in place (its address stays, so captured graphs keep seeing it)."""
        dst.copy_(torch.from_numpy(np.ascontiguousarray(a)).view(dst.shape))
        return dst

    def fill(self, dst: torch.Tensor, value: float, dtype: str) -> torch.Tensor:
        """Every element of `dst` set to `value` on the device, in place (captured graphs keep seeing it)."""
        return dst.fill_(value)

    def to_numpy(self, x: torch.Tensor) -> np.ndarray:
        return x.detach().cpu().numpy()

    def zeros(self, shape: tuple[int, ...], dtype: str) -> torch.Tensor:
        return torch.zeros(shape, dtype=_DTYPES[dtype], device=self.device)

    def full(self, shape: tuple[int, ...], value: float, dtype: str) -> torch.Tensor:
        return torch.full(shape, value, dtype=_DTYPES[dtype], device=self.device)

    def capabilities(self) -> dict[str, frozenset[GGMLType]]:
        return {"embed": SUPPORTED, "matmul": SUPPORTED, "matmul_experts": SUPPORTED}

    # -- shapes ------------------------------------------------------------------------------------
    def reshape(self, x: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
        return x.reshape(shape)

    def split(self, x: torch.Tensor, sizes: Iterable[int]) -> list[torch.Tensor]:
        """Views (column slices): the ops that read them take their row stride or copy them (`.contiguous()`)."""
        return list(torch.split(x, list(sizes), dim=-1))

    def slice_rows(self, x: torch.Tensor, start: int, stop: int) -> torch.Tensor:
        return x[start:stop]

    def concat_rows(self, xs: list[torch.Tensor]) -> torch.Tensor:
        return torch.cat(xs)

    # -- weight ops ----------------------------------------------------------------------------------
    def embed(self, w: CudaWeight, ids: torch.Tensor) -> torch.Tensor:
        flat = ids.reshape(-1)
        if not w.quantized:
            out = w.dense[flat.long()].float()
        else:
            out = torch.empty((flat.shape[0], w.k), dtype=torch.float32, device=self.device)
            kq.dequant(w.parts, int(w.ggml_type), flat.shape[0], w.k, out, rows=flat)
        return out.reshape(*ids.shape, w.k)

    def matmul(self, x: torch.Tensor, w: CudaWeight) -> torch.Tensor:
        lead = x.shape[:-1]
        x2 = x.reshape(-1, w.k).float().contiguous()
        t = x2.shape[0]
        if not w.quantized:
            if t <= MATVEC_MAX_ROWS and w.dense.numel() <= DENSE_MATVEC_MAX:
                y = torch.empty((t, w.rows), dtype=torch.float32, device=self.device)
                kgm.dense_matvec(x2, w.dense, y)
            elif w.dense.dtype == torch.float32 or self.exact:
                y = x2 @ w.dense.float().t()
            else:
                y = (x2.to(w.dense.dtype) @ w.dense.t()).float()
        elif t <= MATVEC_MAX_ROWS and self.exact and w.ggml_type == GGMLType.Q8_0:
            y = torch.empty((t, w.rows), dtype=torch.float32, device=self.device)
            kgm.q8_matvec(x2, w.parts, w.rows, w.k, y)
        elif t <= MATVEC_MAX_ROWS and (self.exact or w.ggml_type not in TUNED_MATVEC):
            y = torch.empty((t, w.rows), dtype=torch.float32, device=self.device)
            kgm.matvec(x2, w.parts, int(w.ggml_type), w.rows, w.k, y)
        elif t <= MATVEC_MAX_ROWS:
            y = torch.empty((t, w.rows), dtype=torch.float32, device=self.device)
            mmvq.matvec(self._quantized(x, x2), w.parts, int(w.ggml_type), w.rows, w.k, y, pdl=self._pdl)
        elif self.exact:
            y = x2 @ self.dequantize(w, torch.float32).t()
        elif self._tiles_gemm(w, t):
            y = self._gemm_tiles(x2, w)
        else:
            y = (x2.half() @ self.dequantize(w, torch.float16).t()).float()
        return y.reshape(*lead, w.rows)

    @staticmethod
    def _tile_rows(t: int) -> bool:
        """Whether t rows are the tile GEMM's (see GEMM_TILES_MAX_ROWS)."""
        return MATVEC_MAX_ROWS < t <= GEMM_TILES_MAX_ROWS

    def _tiles_gemm(self, w: CudaWeight, t: int) -> bool:
        """Whether a matmul of t rows is `_gemm_tiles`."""
        return self._tile_rows(t) and w.quantized and int(w.ggml_type) in kq.SUB64

    def _gemm_tiles(self, x2: torch.Tensor, w: CudaWeight, glu=None) -> torch.Tensor:
        """x2 (t, K) f32 @ W^T (t, N) f32 as one grouped GEMM of a single expert: every row routed to expert 0,
        the rows in blocks of 16-64; glu: (the up weight, act) for act(x W^T) * (x W_up^T)."""
        t = x2.shape[0]
        bm = min(64, max(16, triton.next_power_of_2(t)))
        key = (t, bm)
        aligned = self._dense_pairs.get(key)
        if aligned is None:  # rows 0..t-1 then -1 padding, every block expert 0
            nb = triton.cdiv(t, bm)
            pairs = torch.arange(nb * bm, dtype=torch.int32, device=self.device)
            aligned = self._dense_pairs[key] = (torch.where(pairs < t, pairs, -1), torch.zeros(nb, dtype=torch.int32,
                                                                                               device=self.device))
        ids = aligned[1][:1].expand(t, 1)  # (only its shape is read)
        if self._x16 is not None and self._same_memory(self._x16[0], x2):
            x2 = self._x16[1].view(x2.shape)  # the norm's f16 copy of x2 (the GEMM rounds x to f16 for its dots)
        g = None if glu is None else (glu[0].parts, kel.GLU_ACTS[glu[1]])
        bn, splits, swap = kmoe.tiles_shape(w.rows, w.k, t, glu is not None)
        sems = None
        if splits > 1 and (SPLIT_SUMS_IN_LAUNCH or glu is not None):  # counters every launch leaves zero (the GLU's
            # splits are only summed in the launch: `kmoe.experts_gemm` sems)
            tiles = aligned[1].numel() * triton.cdiv(w.rows, bn)
            if self._sems.numel() < tiles:
                self._sems = torch.zeros(tiles, dtype=torch.int32, device=self.device)
            sems = self._sems
        # the GLU's products feed the down projection's tile GEMM: stored in f16 too, as the norms' (`_x16`)
        half = None if glu is None else self._half_buffer(t, w.rows)
        return self._keep_half(kmoe.experts_gemm(x2, w.parts, int(w.ggml_type), 1, w.rows, w.k, ids, aligned, glu=g,
                                                 bm=bm, bn=bn, splits=splits, swap=swap, sems=sems, out16=half)[:, 0],
                               half)

    def matmuls(self, x: torch.Tensor, ws: list[CudaWeight]) -> list[torch.Tensor]:
        """x @ W.T for each weight of one input; two Q4_K / Q6_K weights (Q and K beside a Q6_K V in a Q4_K_M
        file, a Gated DeltaNet's input projections) for a few rows: one launch (`mmvq.matvec_pair`)."""
        if (len(ws) == 2 and not self.exact and all(w.quantized and w.ggml_type in STREAM_TYPES for w in ws)
                and ws[0].k == ws[1].k and x.shape[-1] == ws[0].k):
            lead = x.shape[:-1]
            x2 = x.reshape(-1, ws[0].k).float().contiguous()
            if x2.shape[0] <= MATVEC_MAX_ROWS:
                ys = [torch.empty((x2.shape[0], w.rows), dtype=torch.float32, device=self.device) for w in ws]
                if mmvq.matvec_pair(self._quantized(x, x2), *((w.parts, int(w.ggml_type), w.rows, w.k, y)
                                                               for w, y in zip(ws, ys)), pdl=self._pdl):
                    return [y.reshape(*lead, w.rows) for w, y in zip(ws, ys)]
        return [self.matmul(x, w) for w in ws]

    def _quantized(self, x: torch.Tensor, x2: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """x2 (the (T, K) f32 view of x) quantized for `mmvq`; the q, k, v (or gate, up) projections
        of one input share one quantization (no op writes its input in place), and the ops that
        quantize their own output (norms, decode attention) leave it here."""
        for hit in self._qx:  # (the codes' shape: x2's rows, a quarter of its columns)
            if hit[1].shape == (x2.shape[0], x2.shape[1] // 4) and self._same_memory(hit[0], x):
                return hit[1:]
        q8 = mmvq.quantize_x(x2, pdl=self._pdl)
        self._keep_q8(x, q8)
        return q8

    def _keep_q8(self, x: torch.Tensor, q8: tuple) -> None:
        """Remember x's quantization (newest first, QX_KEEP of them: a MoE layer's shared expert quantizes
        its GLU output between the norm's and the routed experts' use of the norm's)."""
        self._qx = [(x, *q8)] + self._qx[:QX_KEEP - 1]

    @staticmethod
    def _same_memory(y: torch.Tensor, x: torch.Tensor) -> bool:
        """Whether x is y, or a contiguous view of all of y's memory (the attention output reshaped): what `_qx` and
        `_x16` remember keeps its tensor alive, so that memory holds the same values."""
        return y is x or (x.is_contiguous() and y.is_contiguous() and y.data_ptr() == x.data_ptr()
                          and y.numel() == x.numel())

    def dequantize(self, w: CudaWeight, dtype: torch.dtype = torch.float16) -> torch.Tensor:
        """The whole weight as a (rows, K) tensor of `dtype` (a fresh buffer)."""
        if not w.quantized:
            return w.dense.to(dtype)
        out = torch.empty((w.rows, w.k), dtype=dtype, device=self.device)
        kq.dequant(w.parts, int(w.ggml_type), w.rows, w.k, out)
        return out

    def matmul_experts(self, x, w: CudaWeight, ids):
        """x (T, K) or (T, k, K), w (E, N, K), ids (T, k) -> (T, k, N); only the selected experts are read."""
        T, nsel = ids.shape
        E, n = w.shape[0], w.shape[1]
        x = x.float().contiguous()
        ids = ids.contiguous()
        if T > MATVEC_MAX_ROWS and self._gemm_experts(w, T * nsel):
            return kmoe.experts_gemm(x, w.parts, int(w.ggml_type), E, n, w.k, ids, self._aligned(ids, E))
        if T > MATVEC_MAX_ROWS and not self.capturing and not self._pairs_cheaper(w, T * nsel):
            return self._experts_grouped(x, w, ids)
        if w.quantized:
            out = torch.empty((T, nsel, n), dtype=torch.float32, device=self.device)
            if w.ggml_type in MMVQ_EXPERTS and not self.exact:  # x (T, K) or (T * k, K) on 8 bits
                mmvq.matvec_experts(self._quantized(x, x.reshape(-1, w.k)), w.parts, int(w.ggml_type), n, w.k,
                                    ids, out, order=self._expert_order(ids))
            else:
                kgm.matvec_experts(x, w.parts, int(w.ggml_type), n, w.k, ids, out)
            return out
        sel = w.dense.view(E, n, w.k)[ids.long()].float()  # (T, k, N, K): the selected slabs only
        xs = x[:, None, :, None] if x.dim() == 2 else x[..., None]
        return torch.matmul(sel, xs)[..., 0]

    def matmul_experts_glu(self, x, w_gate: CudaWeight, w_up: CudaWeight, ids, act):
        """Gate, up and the GLU in one 8-bit expert matvec for a few rows (decode) where the two stacks
        share a type and shape (a prompt's (token, expert) pairs ran slower so: Qwen3.5 pp512 3,040 -> 2,435)."""
        T, nsel = ids.shape
        if (T > MATVEC_MAX_ROWS and self._gemm_experts(w_gate, T * nsel) and act in kel.GLU_ACTS
                and w_up.ggml_type == w_gate.ggml_type and w_up.shape == w_gate.shape):
            E, n = w_gate.shape[0], w_gate.shape[1]
            return kmoe.experts_gemm(x.float(), w_gate.parts, int(w_gate.ggml_type), E, n, w_gate.k, ids.contiguous(),
                                     self._aligned(ids, E), glu=(w_up.parts, kel.GLU_ACTS[act]))
        if ((T > MATVEC_MAX_ROWS and not self.capturing) or self.exact or not w_gate.quantized
                or w_gate.ggml_type not in MMVQ_EXPERTS or act not in kel.GLU_ACTS
                or w_up.ggml_type != w_gate.ggml_type or w_up.shape != w_gate.shape):
            return super().matmul_experts_glu(x, w_gate, w_up, ids, act)
        n = w_gate.shape[1]
        x = x.float().contiguous()
        out = torch.empty((T, nsel, n), dtype=torch.float32, device=self.device)
        mmvq.matvec_experts(self._quantized(x, x.reshape(-1, w_gate.k)), w_gate.parts, int(w_gate.ggml_type), n,
                            w_gate.k, ids.contiguous(), out, glu=(w_up.parts, kel.GLU_ACTS[act]),
                            order=self._expert_order(ids))
        return out

    def _expert_order(self, ids: torch.Tensor) -> torch.Tensor | None:
        """`kmoe.expert_order` of a selection of EXPERT_ORDER_MIN_TOKENS tokens or more (a step of many sequences:
        its pairs launched expert by expert), made once for a layer's gate / up and down; None for fewer tokens (a
        token's experts differ: nothing to share)."""
        if ids.shape[0] < EXPERT_ORDER_MIN_TOKENS:
            return None
        hit = self._order
        if hit is None or hit[0] is not ids:
            hit = self._order = (ids, kmoe.expert_order(ids))
        return hit[1]

    def _gemm_experts(self, w: CudaWeight, pairs: int) -> bool:
        """Whether a prompt's expert matmul is one grouped GEMM (`kmoe.experts_gemm`) instead of the per-expert loop:
        stacks of a type its tiles read (`kq.SUB64`), f16 operands (not in exact mode), at least 4 (token, expert)
        pairs an expert on average (fewer: the loop was faster on the H200, `bench/cuda_experts_gemm_bench.py`).
        Also for many small experts (Qwen3.5-35B-A3B), where the matvec over the pairs took twice the GEMM's GPU time
        and lost only while the prompt was host-bound (bench/RESULTS.md, twelfth and fifteenth sessions)."""
        return w.quantized and int(w.ggml_type) in kq.SUB64 and not self.exact and pairs >= 4 * w.shape[0]

    def _aligned(self, ids, n_experts: int):
        """`kmoe.align_pairs` of ids, made once for the gate, up and down products of one layer."""
        bm = kmoe.block_rows(ids.numel(), n_experts)
        hit = self._align
        if hit is None or hit[0] is not ids or hit[1] != (n_experts, bm):
            hit = self._align = (ids, (n_experts, bm), kmoe.align_pairs(ids, n_experts, bm))
        return hit[2]

    def _pairs_cheaper(self, w: CudaWeight, pairs: int) -> bool:
        """Many tokens: whether one 8-bit matvec over every (token, expert) pair (each reads its
        expert's rows: pairs x expert bytes at ~3 TB/s) beats the per-expert GEMM loop (host-bound:
        ~60 us of launches per expert). Many small experts (Qwen3.5-35B-A3B: 256 of 0.6 MB) take the
        pairs, few big ones (GPT-OSS: 32 of 8 MB) the loop."""
        if self.exact or not w.quantized or w.ggml_type not in MMVQ_EXPERTS:
            return False
        expert_bytes = w.nbytes / w.shape[0]
        return pairs * expert_bytes / 3e12 < w.shape[0] * 60e-6

    def _experts_grouped(self, x, w: CudaWeight, ids):
        """Many tokens: gather the (token, slot) pairs of each expert hit, one GEMM per expert."""
        T, nsel = ids.shape
        E, n = w.shape[0], w.shape[1]
        xs = (x[:, None, :].expand(T, nsel, w.k) if x.dim() == 2 else x).reshape(T * nsel, w.k)
        flat = ids.reshape(-1).long()
        order = torch.argsort(flat, stable=True)
        counts = torch.bincount(flat, minlength=E).tolist()  # one host sync per call (prefill only)
        out = torch.empty((T * nsel, n), dtype=torch.float32, device=self.device)
        start = 0
        for e, cnt in enumerate(counts):
            if cnt == 0:
                continue
            sel = order[start:start + cnt]
            start += cnt
            dt = torch.float32 if self.exact else torch.float16
            if w.quantized:
                we = torch.empty((n, w.k), dtype=dt, device=self.device)
                rows = torch.arange(e * n, (e + 1) * n, device=self.device)
                kq.dequant(w.parts, int(w.ggml_type), n, w.k, we, rows=rows)
            else:
                we = w.dense.view(E, n, w.k)[e].to(dt if self.exact else w.dense.dtype)
            out[sel] = (xs[sel].to(we.dtype) @ we.t()).float()
        return out.reshape(T, nsel, n)

    # -- elementwise, norms ----------------------------------------------------------------------------
    def add(self, a, b):
        return torch.add(a, b)

    def mul(self, a, b):
        return torch.mul(a, b)

    def scale(self, x, s):
        return x * float(s)

    def softcap(self, x, cap):
        return torch.tanh(x * (1.0 / cap)) * cap

    def rms_norm(self, x, w, eps):
        x = x.contiguous()
        out = torch.empty_like(x)
        if self._feeds_matvec(x):  # the norm also quantizes its output for the matvecs it feeds
            self._keep_q8(out, mmvq.norm_quantize(x, w, float(eps), out, pdl=self._pdl))
        else:
            kel.rms_norm(x, w, float(eps), out, out16=self._half_for_tiles(out))
        return out

    def add_rms_norm(self, x, r, w, eps):
        x, r = x.contiguous(), r.contiguous()
        s, out = torch.empty_like(x), torch.empty_like(x)
        if self._feeds_matvec(x):
            self._keep_q8(out, mmvq.norm_quantize(x, w, float(eps), out, res=r, sum_out=s, pdl=self._pdl))
        else:
            kel.rms_norm(x, w, float(eps), out, res=r, sum_out=s, out16=self._half_for_tiles(out))
        return s, out

    def _half_for_tiles(self, out) -> torch.Tensor | None:
        """`_half_buffer` for a norm's (T, D) f32 output, kept as its copy (`_keep_half`) for the norm to fill."""
        half = self._half_buffer(*out.shape) if out.dim() == 2 and out.dtype == torch.float32 else None
        self._keep_half(out, half)
        return half

    def _half_buffer(self, rows: int, cols: int) -> torch.Tensor | None:
        """An f16 (rows, cols) buffer an op also fills with its output where tile GEMMs read that next (`_x16`: x
        rounded once, no launch a GEMM): a batched step's norms, GLU, attention; None at other rows, in exact mode."""
        ok = not self.exact and self._tile_rows(rows)
        return torch.empty((rows, cols), dtype=torch.float16, device=self.device) if ok else None

    def _keep_half(self, out: torch.Tensor, half: torch.Tensor | None) -> torch.Tensor:
        """Remember half (unless None) as the f16 copy of out (`_x16`); out."""
        if half is not None:
            self._x16 = (out.view(half.shape), half)
        return out

    @property
    def _pdl(self) -> tuple[int, int]:
        """The (wait, trigger) of `mmvq` / `mmvs` launches: programmatic dependent launch in captured steps."""
        return (1, 1) if self.capturing and PDL and self._pdl_ok else (0, 0)

    def _feeds_matvec(self, x) -> bool:
        """A (T, D) activation of a decode step: what the 8-bit-activation matvec reads."""
        return (not self.exact and x.dim() == 2 and x.shape[0] <= MATVEC_MAX_ROWS and x.shape[1] % 32 == 0
                and x.dtype == torch.float32)

    def matmul_glu(self, x, w_gate: CudaWeight, w_up: CudaWeight, act):
        """act(x W_gate^T) * (x W_up^T); for a few rows of two weights of one tuned type, one kernel."""
        lead = x.shape[:-1]
        x2 = x.reshape(-1, w_gate.k)
        q80 = self.exact and w_gate.ggml_type == GGMLType.Q8_0  # on the f32 activations (q8_matvec)
        if (not self.exact and self._tiles_gemm(w_gate, x2.shape[0]) and act in kel.GLU_ACTS
                and w_up.ggml_type == w_gate.ggml_type and w_up.shape == w_gate.shape):
            return self._gemm_tiles(x2.float().contiguous(), w_gate, (w_up, act)).reshape(*lead, w_gate.rows)
        if (x2.shape[0] > MATVEC_MAX_ROWS or not (q80 or (w_gate.ggml_type in TUNED_MATVEC and not self.exact))
                or act not in kel.GLU_ACTS or w_up.ggml_type != w_gate.ggml_type or w_up.shape != w_gate.shape):
            return super().matmul_glu(x, w_gate, w_up, act)
        x2 = x2.float().contiguous()
        y = torch.empty((x2.shape[0], w_gate.rows), dtype=torch.float32, device=self.device)
        if q80:
            kgm.q8_matvec(x2, w_gate.parts, w_gate.rows, w_gate.k, y, glu=(w_up.parts, kel.GLU_ACTS[act]))
            return y.reshape(*lead, w_gate.rows)
        n = w_gate.rows
        mmvq.matvec(self._quantized(x, x2), w_gate.parts, int(w_gate.ggml_type), n, w_gate.k, y,
                    glu=(w_up.parts, kel.GLU_ACTS[act]), pdl=self._pdl)
        return y.reshape(*lead, n)

    def glu(self, gate, up, act):
        if act not in kel.GLU_ACTS:
            raise ValueError(f"unknown GLU activation {act!r}")
        gate, up = gate.contiguous(), up.contiguous()
        out = torch.empty_like(gate)
        kel.glu(gate, up, act, out)
        return out

    def unary(self, x, fn):
        if fn == "sigmoid":
            return torch.sigmoid(x)
        if fn == "silu":
            return F.silu(x)
        if fn == "softplus":
            return torch.where(x > 20, x, torch.log1p(torch.exp(x)))
        if fn == "gelu":
            return F.gelu(x, approximate="tanh")
        raise ValueError(f"unknown unary function {fn!r}")

    # -- attention ---------------------------------------------------------------------------------------
    def rope(self, x, pos, p: RopeParams, freq_factors=None):
        return self._rope_fused(x, pos, p, freq_factors)

    def norm_rope(self, x, w, eps, pos, p, freq_factors=None):
        return self._rope_fused(x, pos, p, freq_factors, norm=(w, eps))

    def rope_kv_write(self, k, v, pos, p, freq_factors, cache_k, cache_v, cache_pos, slots):
        return self._rope_fused(k, pos, p, freq_factors, kv=(v, slots, cache_k, cache_v, cache_pos))

    def norm_rope_kv_write(self, k, w, eps, v, pos, p, freq_factors, cache_k, cache_v, cache_pos, slots):
        return self._rope_fused(k, pos, p, freq_factors, norm=(w, eps), kv=(v, slots, cache_k, cache_v, cache_pos))

    def rope_qk_kv_write(self, q, k, v, pos, p, freq_factors, cache_k, cache_v, cache_pos, slots, q_norm=None,
                         k_norm=None, eps=0.0):
        """One kernel for Q's and K's (per-head norm +) rope and the K/V cache write; returns the rotated Q."""
        T, Hk, Dh = k.shape
        if q.shape[0] != T or q.shape[2] != Dh or v[0].numel() % Hk:
            return super().rope_qk_kv_write(q, k, v, pos, p, freq_factors, cache_k, cache_v, cache_pos, slots,
                                            q_norm, k_norm, eps)
        c, mscale = self._rope_factors(p, freq_factors)  # (q, k and v read as they are: `kel.packed_rows`)
        out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
        kel.rope_qk(q, k, pos, c, mscale, p.n_dims, p.mode in ("neox", "imrope"), out,
                    (v, slots, cache_k, cache_v, cache_pos, self.capturing), q_w=q_norm, k_w=k_norm, eps=float(eps))
        return out

    def _rope_fused(self, x, pos, p: RopeParams, freq_factors, norm=None, kv=None):
        """One kernel: (per-head RMS norm,) rope, (and the K/V cache write of the token)."""
        c, mscale = self._rope_factors(p, freq_factors)  # (x and v read as they are: `kel.packed_rows`)
        out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        w, eps = norm if norm is not None else (None, 0.0)
        if kv is not None:
            v, slots, ck, cv, cpos = kv
            kv = (v, slots, ck, cv, cpos, self.capturing)
        kel.rope(x, pos, c, mscale, p.n_dims, p.mode in ("neox", "imrope"), out, norm_w=w, eps=float(eps),
                 norm=norm is not None, kv=kv)
        return out

    def _rope_factors(self, p: RopeParams, freq_factors) -> tuple[torch.Tensor, float]:
        """Per pair i: angle = pos * c[i] (theta_scale^i, freq factors, freq scale, YaRN ramp, IMROPE)."""
        key = (p, None if freq_factors is None else freq_factors.data_ptr())
        hit = self._rope.get(key)
        if hit is None:  # the entry holds the factors tensor: its address is not reused while the key lives
            hit = self._rope[key] = (*kel.rope_factors(p, None if freq_factors is None else self.to_numpy(freq_factors),
                                                   self.device), freq_factors)
        return hit[:2]

    def kv_write(self, cache_k, cache_v, cache_pos, k, v, pos, slots):
        kel.kv_write(k, v, pos, slots, cache_k, cache_v, cache_pos, self.capturing)

    def rope_qk_attention(self, q, k, v, pos, p, freq_factors, cache_k, cache_v, cache_pos, slots, n_kv, kq_scale,
                          window=0, sinks=None, q_norm=None, k_norm=None, eps=0.0):
        """Up to DECODE_ATTN_MAX_ROWS tokens: the decode attention's split programs also do the norms, the
        rope and the KV write (`kattn.decode_attention`'s rope): one launch for the three ops."""
        T, Hk, Dh = k.shape
        if (T > DECODE_ATTN_MAX_ROWS or q.dim() != 3 or q.shape[0] != T or q.shape[2] != Dh
                or tuple(cache_k.shape[1:]) != (Hk, Dh) or v.shape != (T, Hk, cache_v.shape[2])):
            return super().rope_qk_attention(q, k, v, pos, p, freq_factors, cache_k, cache_v, cache_pos, slots, n_kv,
                                             kq_scale, window, sinks, q_norm, k_norm, eps)
        c, mscale = self._rope_factors(p, freq_factors)
        rope = (q_norm, k.contiguous(), k_norm, v.contiguous(), c, slots, float(eps), mscale, p.n_dims,
                p.mode in ("neox", "imrope"), self.capturing)
        return self._decode_attention(q, cache_k, cache_v, pos, cache_pos, n_kv, kq_scale, window, 0.0, sinks, rope)

    def rope_qk_attention_seqs(self, q, k, v, pos, p, freq_factors, kv, kq_scale, window=0, sinks=None, q_norm=None,
                               k_norm=None, eps=0.0):
        """One token of each of several sequences: the norms, rope, K/V writes and the attention over each one's own
        cells in three launches for all of them (`kseqs.attention_seqs`, cells found through `kv_tables`); else, and in
        exact mode, a sequence at a time."""
        if kv.table is None or self.exact or any(n != 1 for n in kv.counts):
            return super().rope_qk_attention_seqs(q, k, v, pos, p, freq_factors, kv, kq_scale, window, sinks, q_norm,
                                                  k_norm, eps)
        c, mscale = self._rope_factors(p, freq_factors)
        caches = kv.group.caches
        cells = max(cache.layer(kv.il).size for cache in caches)
        half = self._half_buffer(q.shape[0], q.shape[1] * v.shape[2])
        return self._keep_half(kseqs.attention_seqs(
            q.float(), k.float(), v.float(), pos, kv.table, caches[0].dtype == "f16", c, mscale, p.n_dims,
            p.mode in ("neox", "imrope"), float(kq_scale), int(window), sinks, q_norm, k_norm, float(eps),
            nsplit=kseqs.seq_splits(cells), max_cells=cells, out16=half), half)

    def kv_tables(self, group):
        """(layers, sequences, 4) int64 on the device: where the batched kernels find each sequence's cells of each
        attention layer (`kseqs.table_row`) and the conv window and delta-rule state of each recurrent layer
        (`krec.conv_delta_seqs`: their addresses, then zeros); None (the sequences then run one at a time) where a
        cache's cells are not f16 / f32 tensors (q8_0) or an address is not 16-byte aligned (the kernels' loads)."""
        rows = []
        for cache in group.caches:
            r = self._kv_rows.get(cache)
            if r is None:
                r = np.zeros((len(cache.layers), 4), np.int64)
                for il, lk in enumerate(cache.layers):
                    if isinstance(lk, LayerKV):
                        if not isinstance(lk.k, torch.Tensor) or lk.k.dtype not in (torch.float16, torch.float32):
                            return None
                        r[il] = kseqs.table_row(lk.k, lk.v, lk.pos)
                    elif isinstance(lk, LayerState):
                        r[il, :2] = lk.conv.data_ptr(), lk.ssm.data_ptr()
                if (r[:, :3] % 16).any():
                    return None
                self._kv_rows[cache] = r  # a cache changes its tensors in place only (fill, overwrite)
            rows.append(r)
        return torch.from_numpy(np.stack(rows, 1)).to(self.device)

    def conv_delta_rule_seqs(self, mixed, alpha, b, conv_w, dt_bias, a, states, heads, eps):
        """One token of each of several sequences: the conv and the delta rule of all of them in two launches
        (`krec.conv_delta_seqs`, states found through `kv_tables`); else a sequence at a time."""
        if states.table is None or dt_bias is None or any(n != 1 for n in states.counts):
            return super().conv_delta_rule_seqs(mixed, alpha, b, conv_w, dt_bias, a, states, heads, eps)
        hv = heads[1]
        return krec.conv_delta_seqs(mixed, alpha.reshape(-1, hv), b.reshape(-1, hv), conv_w, dt_bias, a, states.table,
                                    heads, eps)

    def attention(self, q, k, v, q_pos, kv_pos, n_kv, kq_scale, window=0, softcap=0.0, sinks=None):
        T, Hq, _ = q.shape
        if T <= DECODE_ATTN_MAX_ROWS:
            return self._decode_attention(q, k, v, q_pos, kv_pos, n_kv, kq_scale, window, softcap, sinks)
        out = torch.empty((T, Hq, v.shape[2]), dtype=torch.float32, device=self.device)
        kflash.prefill_attention(q.contiguous(), k, v, q_pos, kv_pos, float(kq_scale), int(window), float(softcap),
                                 sinks, out, exact=self.exact)
        return out

    def _decode_attention(self, q, k, v, q_pos, kv_pos, n_kv, kq_scale, window, softcap, sinks, rope=None):
        """`kattn.decode_attention` (split over the cells, then combined), with the output also on 8 bits
        for the output projection where that takes it (see _quantized)."""
        T, Hq, _ = q.shape
        out = torch.empty((T, Hq, v.shape[2]), dtype=torch.float32, device=self.device)
        nsplit, bs, stages, warps = attention_config(k.shape[0], self._wide)  # static per cache size
        scratch = (torch.empty((T * Hq * nsplit,), dtype=torch.float32, device=self.device),
                   torch.empty((T * Hq * nsplit,), dtype=torch.float32, device=self.device),
                   torch.empty((T * Hq * nsplit, v.shape[2]), dtype=torch.float32, device=self.device))
        n = k.shape[0] if self.capturing else int(n_kv)
        dv = v.shape[2]
        q8 = None
        if not self.exact and T <= MATVEC_MAX_ROWS and dv >= 32 and dv & (dv - 1) == 0:
            q8 = mmvq.q8_buffers(T, Hq * dv, self.device)
        kattn.decode_attention(q.contiguous(), k, v, q_pos, kv_pos, n, float(kq_scale), int(window), float(softcap),
                               sinks, scratch, out, nsplit=nsplit, bs=bs, stages=stages, warps=warps, q8=q8, rope=rope,
                               pdl=ATTN_PDL if self._pdl[0] else ((0, 0), (0, 0)), exact=self.exact,
                               cluster=ATTN_CLUSTER)
        if q8 is not None:
            self._keep_q8(out, q8)
        return out

    # -- recurrent layers -------------------------------------------------------------------------------
    def conv1d_causal(self, x, state, w):
        return krec.conv1d_causal(x, state, w)

    def conv1d_causal_act(self, x, state, w, act):
        if act != "silu":
            return super().conv1d_causal_act(x, state, w, act)
        return krec.conv1d_causal(x, state, w, silu=True)  # one kernel: taps, silu, window shift

    def delta_net_step(self, q, k, v, alpha, b, dt_bias, a, state, eps):
        """One token: one kernel for the gates, the q/k L2 norms and the delta rule; a prompt: the chunked form with
        the gates and norms in its first kernel (`krec.delta_net_chunked` raw)."""
        if not state.is_contiguous() or state.dtype != torch.float32:
            return super().delta_net_step(q, k, v, alpha, b, dt_bias, a, state, eps)
        if q.shape[0] > 1:
            return krec.delta_net_chunked(q, k, v, alpha, b, state, raw=(dt_bias, a, eps))
        return krec.delta_net_step(q, k, v, alpha, b, dt_bias, a, state, eps)

    def rms_norm_gated(self, x, w, eps, z, act):
        """One kernel; for a few rows of (T, H, N), N a power of two >= 32, it also writes its output's
        8-bit form for the output projection's matvec (see _quantized)."""
        if act != "silu" or w is None or z.numel() != x.numel():
            return super().rms_norm_gated(x, w, eps, z, act)
        n = x.shape[-1]
        q8 = None
        if not self.exact and x.dim() == 3 and x.shape[0] <= MATVEC_MAX_ROWS and n >= 32 and n & (n - 1) == 0:
            q8 = mmvq.q8_buffers(x.shape[0], x.shape[1] * n, self.device)
        half = self._half_buffer(x.shape[0], x[0].numel()) if x.dim() == 3 else None  # (the output projection's)
        out = krec.rms_norm_gated(x, w, eps, z, q8, half)
        if q8 is not None:
            self._keep_q8(out, q8)
        return self._keep_half(out, half)

    def delta_net_recurrent(self, q, k, v, g, beta, state):
        return krec.delta_net_recurrent(q, k, v, g, beta, state)

    def delta_net_chunked(self, q, k, v, g, beta, state, chunk=64):
        return krec.delta_net_chunked(q, k, v, g, beta, state, chunk)

    # -- mixture of experts, sampling -----------------------------------------------------------------------
    def router_topk(self, logits, k, gating, norm_w, w_scale):
        return kmoe.router_topk(logits, k, gating, norm_w, w_scale)  # one kernel; ties: lower id first

    def router_topk_shared(self, logits, k, gating, norm_w, w_scale, shared_gate):
        return kmoe.router_topk(logits, k, gating, norm_w, w_scale, shared_gate)  # one kernel, slot k appended

    def weighted_sum(self, x, w):
        return kmoe.weighted_sum(x, w)

    def weighted_sum_shared(self, x, w, shared, gate):
        return kmoe.weighted_sum(x, w, shared, gate)

    def argmax(self, x):
        return torch.argmax(x, dim=-1).to(torch.int32)

    def top_logits(self, x, k):
        """`BaseOps.top_logits` on the device: only k values, k ids and the log-sum-exp a row come back (one copy)."""
        x = x.reshape(-1, x.shape[-1]).float()
        k = max(1, min(int(k), x.shape[1]))
        vals, ids = torch.topk(x, k, dim=1)
        packed = torch.cat([vals, ids.float(), torch.logsumexp(x, dim=1, keepdim=True)], 1).cpu().numpy()
        return packed[:, :k], packed[:, k:2 * k].astype(np.int64), packed[:, 2 * k].astype(np.float64)

    # -- the graph-captured decode step --------------------------------------------------------------------
    def greedy_steps(self, forward, cfg, weights, batch, cache, n):
        """n greedy steps as replays of one captured step whose argmax feeds the next (graph.py); a group of
        sequences one token each (`CacheGroup`): each row's argmax its sequence's next token."""
        p = self.loop_steps(forward, cfg, weights, batch, cache, n)
        return None if p is None else p.ids() if batch.seqs else p.ids().reshape(-1)

    def loop_steps(self, forward, cfg, weights, batch, cache, n, params=None, uniforms=None, top=0):
        """`BaseOps.loop_steps`: a captured step replayed n times, its rows' argmax (params None) or draws
        (graph.py `sample`) feeding the next; a `graph.Pending`."""
        one_token = all(k == 1 for k in batch.seqs) if batch.seqs else batch.n == 1  # (a row each sequence)
        graphs = self._step_graphs(forward, cfg, weights, batch) if one_token else None
        if graphs is None:
            return None
        if params is not None:
            return graphs.sample(forward, cfg, weights, batch, cache, n, params, uniforms, top)
        return (graphs.greedy_seqs if batch.seqs else graphs.greedy)(forward, cfg, weights, batch, cache, n)

    def run_step(self, forward, cfg, weights, batch, cache):
        """One model step: a replayed CUDA graph where one is captured (decode steps, repeated
        prompt-chunk lengths; see graph.py), else eager."""
        graphs = self._step_graphs(forward, cfg, weights, batch)
        if graphs is None:
            return forward(self, cfg, weights, batch, cache)
        return graphs.run(forward, cfg, weights, batch, cache)

    def _step_graphs(self, forward, cfg, weights, batch):
        """The graphs for this step, or None where it runs eagerly."""
        if not self.graphs_enabled or self.device.type != "cuda":
            return None
        if self._graphs is None:
            from zinc.backends.cuda.graph import StepGraphs

            self._graphs = StepGraphs(self)
        return self._graphs if self._graphs.capturable(forward, cfg, weights, batch) else None
