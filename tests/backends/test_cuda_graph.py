"""The CUDA backend end to end on a GPU: tiny models against the NumPy backend, and the
CUDA-graph decode step against the teacher-forced logits. Skipped without a CUDA device."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

from zinc.api import load  # noqa: E402
from zinc.testing.compare import compare_logits  # noqa: E402
from zinc.synth import write_model  # noqa: E402


@pytest.mark.parametrize("preset", ["qwen3-tiny", "llama3-tiny"])
@pytest.mark.parametrize("ftype", ["Q4_K_M", "Q8_0"])
def test_tiny_model_and_graph_decode(tmp_path, preset, ftype):
    path = tmp_path / f"{preset}-{ftype}.gguf"
    write_model(str(path), preset, ftype=ftype, seed=1)
    ids = [int(i) for i in np.random.default_rng(2).integers(0, 512, 32)]
    ref = load(path, backend="cpu", n_ctx=64).logits(ids)
    m = load(path, backend="cuda", n_ctx=64)
    full = compare_logits(m.logits(ids), ref)
    assert full["argmax_agree"] == 1.0 and full["mean_kl"] < 1e-3
    cache = m.new_cache(64)
    steps = [m.forward(ids[:12], cache)] + [m.forward([t], cache, last_only=True) for t in ids[12:]]
    dec = compare_logits(np.concatenate(steps), ref)
    assert dec["argmax_agree"] == 1.0 and dec["mean_kl"] < 1e-3
    assert m.ops._graphs is not None and m.ops._graphs.captures == 1
    cache.truncate(20)  # positions rewritten in place: the captured graph is reused
    again = np.concatenate([m.forward([t], cache, last_only=True) for t in ids[20:]])
    assert m.ops._graphs.captures == 1
    assert compare_logits(again, ref[20:])["mean_kl"] < 1e-3


@pytest.mark.parametrize("preset", ["qwen3-tiny", "gemma3-tiny"])
def test_q8_0_cache_graph_decode(tmp_path, preset):
    """q8_0 KV cells on both backends: the prefill (flash) and the captured decode steps (split kernel writing
    the cells) against the NumPy backend's q8_0 cells."""
    path = tmp_path / f"{preset}.gguf"
    write_model(str(path), preset, ftype="Q8_0", seed=3)
    ids = [int(i) for i in np.random.default_rng(4).integers(0, 512, 40)]
    ref = load(path, backend="cpu", n_ctx=64, kv_dtype="q8_0").logits(ids)
    m = load(path, backend="cuda", n_ctx=64, kv_dtype="q8_0")
    cache = m.new_cache(64)
    assert cache.dtype == "q8_0" and cache.kv_layers[0].k.q.dtype == torch.int8
    steps = [m.forward(ids[:24], cache)] + [m.forward([t], cache, last_only=True) for t in ids[24:]]
    got = compare_logits(np.concatenate(steps), ref)
    assert got["argmax_agree"] == 1.0 and got["mean_kl"] < 1e-3
    assert m.ops._graphs.captures == 1


@pytest.mark.parametrize("preset", ["qwen3-tiny", "gemma3-tiny"])
def test_greedy_on_the_device(tmp_path, preset):
    """Model.greedy on CUDA (argmax in the captured step feeds the next replay) chooses what
    one-step forwards + host argmax choose, on a fresh capture and on a reused graph."""
    path = tmp_path / f"{preset}.gguf"
    write_model(str(path), preset, ftype="Q8_0", seed=3)
    m = load(path, backend="cuda", n_ctx=96)
    ids = [int(i) for i in np.random.default_rng(4).integers(0, 512, 10)]
    for _ in range(2):
        want_cache, got_cache = m.new_cache(96), m.new_cache(96)
        m.forward(ids[:-1], want_cache)
        m.forward(ids[:-1], got_cache)
        tok, want = ids[-1], []
        for _ in range(40):
            tok = int(np.argmax(m.forward([tok], want_cache, last_only=True)[-1]))
            want.append(tok)
        got = m.greedy(ids[-1], got_cache, 40)
        assert got == want and got_cache.n_past == want_cache.n_past
        got_cache.truncate(len(ids))  # the same cache again: the greedy graph is replayed
        assert m.greedy(want[0], got_cache, 39) == want[1:]


@pytest.mark.parametrize("preset", ["qwen3-tiny", "gemma3-tiny", "gemma4-tiny"])
def test_prompt_chunk_graphs(tmp_path, preset):
    """A prompt-chunk length seen before is captured, then replayed at other positions (gemma3:
    sliding-window rings that wrap); logits equal the NumPy backend's every time."""
    path = tmp_path / f"{preset}.gguf"
    write_model(str(path), preset, ftype="Q8_0", seed=5)
    ids = [int(i) for i in np.random.default_rng(6).integers(0, 512, 70)]
    ref = load(path, backend="cpu", n_ctx=128, n_ubatch=24).logits(ids)
    m = load(path, backend="cuda", n_ctx=128, n_ubatch=24)  # chunks of 24, 24, 22 tokens
    for run in range(3):
        got = compare_logits(m.logits(ids), ref)
        assert got["argmax_agree"] == 1.0 and got["mean_kl"] < 1e-3, (run, got)
        # run 0 captures the second 24-token chunk, run 1 replays it at positions 0 and 24 and captures
        # the 22-token chunk (its second sighting), run 2 only replays
        assert m.ops._graphs.captures == min(run + 1, 2), run


@pytest.mark.parametrize("preset", ["qwen35-tiny", "qwen35moe-tiny", "qwen3moe-tiny", "gpt-oss-tiny", "gemma4moe-tiny"])
def test_prompt_chunk_graphs_recurrent_and_moe(tmp_path, preset):
    """Prompt chunks of hybrid (Gated DeltaNet state carried from chunk to chunk) and MoE models (the experts'
    grouped GEMM, its pair alignment on the GPU) are captured and replayed like a dense model's: every run's logits
    equal those of the same backend without graphs, and the NumPy backend's."""
    from zinc.backends.cuda.ops import CudaOps

    path = tmp_path / f"{preset}.gguf"
    write_model(str(path), preset, ftype="Q8_0", seed=7)
    ids = [int(i) for i in np.random.default_rng(8).integers(0, 500, 70)]
    ref = load(path, backend="cpu", n_ctx=128, n_ubatch=24).logits(ids)
    eager = load(path, backend=CudaOps(graphs=False), n_ctx=128, n_ubatch=24).logits(ids)
    assert compare_logits(eager, ref)["mean_kl"] < 1e-2
    m = load(path, backend="cuda", n_ctx=128, n_ubatch=24)  # chunks of 24, 24, 22 tokens
    for run in range(3):
        got = m.logits(ids)
        assert np.abs(got - eager).max() <= 1e-3 * np.abs(eager).max(), run
        assert m.ops._graphs.captures == min(run + 1, 2), run


@pytest.mark.parametrize("preset", ["qwen3-tiny", "gemma3-tiny", "qwen35-tiny"])
def test_engine_prompt_cache(tmp_path, preset):
    """The engine's prompt caching on CUDA (a cache cut back in place, the next prompt chunks at positions
    that are no multiple of n_ubatch, then the captured decode graph): every token the follow-up request
    chooses is the NumPy backend's argmax of the whole sequence, or within 0.05 of it
    (`prompt_cache_follow_ups`, as the Vulkan test runs it)."""
    from zinc.testing.compare import prompt_cache_follow_ups

    path = tmp_path / f"{preset}.gguf"
    write_model(str(path), preset, ftype="Q8_0", seed=9)
    r = prompt_cache_follow_ups(load(path, backend="cuda", n_ctx=128, n_ubatch=16),
                                load(path, backend="cpu", n_ctx=128, n_ubatch=16))
    # the next turn keeps all of the first cache; the prompt that leaves the reply is cut back to p where the
    # cache can be (not recurrent state; not rings of 16 + 16 - 1 cells that moved 25 tokens past p)
    assert r["next"]["cached"] == r["p"] + 4, r
    assert r["cut"]["cached"] == (r["p"] if preset == "qwen3-tiny" else 0), r
    assert r["next"]["gap"] <= 0.05 and r["cut"]["gap"] <= 0.05, r


@pytest.mark.parametrize("preset,tables", [("qwen3-tiny", True), ("gpt-oss-tiny", True), ("qwen35-tiny", True),
                                           ("gemma3-tiny", False)])
@pytest.mark.parametrize("n_seqs", [3, 6])
def test_forward_seqs_graphs(tmp_path, preset, tables, n_seqs):
    """Sequences decoding together (`Model.forward_seqs`) on CUDA against the NumPy backend's: the first group step
    captured, the next ones replayed at later positions; a second group of other caches replays the same graph
    where every layer found its cells or recurrent state through the tables (qwen3, gpt-oss, qwen35: one launch set
    for all the sequences), and is captured again where the step read a sequence's own layers (gemma3's query
    pre-scale: its attention a sequence at a time). 3 sequences: 8-bit matvecs; 6: the tile GEMM."""
    path = tmp_path / f"{preset}.gguf"
    write_model(str(path), preset, ftype="Q8_0", seed=11)
    m, ref = load(path, backend="cuda", n_ctx=96), load(path, backend="cpu", n_ctx=96)
    rng = np.random.default_rng(12)
    for group in range(2):
        prompts = [rng.integers(0, m.n_vocab, int(n)).tolist() for n in rng.integers(3, 40, n_seqs)]
        caches, refs = [m.new_cache(96) for _ in prompts], [ref.new_cache(96) for _ in prompts]
        for p, c, r in zip(prompts, caches, refs):
            m.forward(p[:-1], c)
            ref.forward(p[:-1], r)
        last = [p[-1] for p in prompts]
        before = m.ops._graphs.captures if m.ops._graphs else 0
        for step in range(4):
            want = ref.forward_seqs([([t], c) for t, c in zip(last, refs)])
            got = m.forward_seqs([([t], c) for t, c in zip(last, caches)])
            res = compare_logits(got, want)
            assert res["argmax_agree"] == 1.0 and res["mean_kl"] < 1e-3, (group, step, res)
            last = np.argmax(want, -1).tolist()
        new = m.ops._graphs.captures - before
        assert new == (0 if group and tables else 1), (group, new)


@pytest.mark.parametrize("preset,tables", [("qwen3-tiny", True), ("qwen35-tiny", True), ("gemma3-tiny", False)])
def test_greedy_seqs_graphs(tmp_path, preset, tables):
    """A group's greedy decode on the device (`Model.greedy_seqs`: a captured group step whose rows' argmax feed the
    next replay) chooses what its steps one at a time (`forward_seqs(argmax=True)`) choose, advances every cache;
    a second group of other caches replays the same graph where the step read only the tables."""
    path = tmp_path / f"{preset}.gguf"
    write_model(str(path), preset, ftype="Q8_0", seed=13)
    m = load(path, backend="cuda", n_ctx=96)
    rng = np.random.default_rng(14)
    for group in range(2):
        prompts = [rng.integers(0, m.n_vocab, int(n)).tolist() for n in rng.integers(3, 40, 6)]
        caches, steps = ([m.new_cache(96) for _ in prompts] for _ in range(2))
        for p, c, s in zip(prompts, caches, steps):
            m.forward(p[:-1], c)
            m.forward(p[:-1], s)
        last, want = [p[-1] for p in prompts], []
        for _ in range(9):
            last = m.forward_seqs([([t], c) for t, c in zip(last, steps)], argmax=True).tolist()
            want.append(last)
        before = m.ops._graphs.captures
        got = m.greedy_seqs([p[-1] for p in prompts], caches, 9)
        assert got.tolist() == np.array(want).T.tolist(), group
        assert [c.n_past for c in caches] == [len(p) + 8 for p in prompts]
        assert m.ops._graphs.captures - before == (0 if group and tables else 1), group


class _Draws:
    """A sampler's generator that hands out given draws in order."""

    def __init__(self, draws) -> None:
        self.draws = list(draws)

    def random(self) -> float:
        return self.draws.pop(0)


@pytest.mark.parametrize("preset", ["qwen3-tiny", "qwen35-tiny", "gemma3-tiny"])
def test_sample_seqs_graphs(tmp_path, preset):
    """Sampling on the device (`Model.sample_seqs`: a captured step, one sequence or a group, whose rows' tokens
    are drawn by their sampler settings and feed the next replay) draws what the host's `Sampler` draws from each
    step's best logits (or whole rows, top-k off) with the same uniforms, greedy rows among them; every cache
    advances; the second chunk replays the graph, as `start_seqs` and a `follow` launched before its ids are read."""
    from zinc.engine.sampler import Sampler, SamplingParams

    path = tmp_path / f"{preset}.gguf"
    write_model(str(path), preset, ftype="Q8_0", seed=15)
    m = load(path, backend="cuda", n_ctx=96)
    rng = np.random.default_rng(16)
    settings = [SamplingParams(), SamplingParams(temperature=1.5, top_k=100, top_p=0.9), SamplingParams.greedy(),
                SamplingParams(temperature=0.5, top_k=8, min_p=0.2, min_keep=2),
                SamplingParams(temperature=1.0, top_k=0, top_p=1.0, min_p=0.0)]  # (an OpenAI client's: whole rows)
    for seqs, settings in ((1, settings[-1:]), (1, settings[:1]), (5, settings)):
        prompts = [rng.integers(0, m.n_vocab, int(n)).tolist() for n in rng.integers(3, 40, seqs)]
        caches, steps = ([m.new_cache(96) for _ in prompts] for _ in range(2))
        for p, c, s in zip(prompts, caches, steps):
            m.forward(p[:-1], c)
            m.forward(p[:-1], s)
        rows = [Sampler(settings[i], m.n_vocab).device_row() for i in range(seqs)]
        last = [p[-1] for p in prompts]
        for chunk in range(2):
            u = rng.random((7, seqs))
            want, tok = [], list(last)
            for step in range(7):
                tops = (m.forward_seqs([([t], s) for t, s in zip(tok, steps)], top=128) if seqs > 1
                        else [m.forward(tok, steps[0], top=128)])
                samplers = [Sampler(settings[i], m.n_vocab) for i in range(seqs)]
                for i, s in enumerate(samplers):
                    s.rng = _Draws([u[step, i]])
                tok = [s.sample(t)[0] for s, t in zip(samplers, tops)]
                want.append(tok)
            before = m.ops._graphs.captures
            if chunk == 0:
                got = m.sample_seqs(last, caches, 7, rows, u)
            else:  # 4 steps, then 3 more launched before the first 4 are read
                first = m.start_seqs(last, caches, 4, rows, u[:4])
                more = first.follow(3, u[4:])
                got = np.concatenate([first.ids(), more.ids()], 1)
            assert got.tolist() == np.array(want).T.tolist(), (seqs, chunk)
            assert [c.n_past for c in caches] == [len(p) - 1 + 7 * (chunk + 1) for p in prompts]
            assert m.ops._graphs.captures - before == (1 if chunk == 0 else 0), (seqs, chunk)
            last = tok


@pytest.mark.parametrize("preset", ["qwen3-tiny", "qwen35-tiny"])
def test_greedy_loops_follow(tmp_path, preset):
    """Greedy device loops chained without reading between them (`start_seqs`, then `follow` twice before any ids
    are read) give `greedy`'s tokens, one sequence and a group of three."""
    path = tmp_path / f"{preset}.gguf"
    write_model(str(path), preset, ftype="Q8_0", seed=17)
    m = load(path, backend="cuda", n_ctx=96)
    rng = np.random.default_rng(18)
    for seqs in (1, 3):
        prompts = [rng.integers(0, m.n_vocab, int(n)).tolist() for n in rng.integers(3, 30, seqs)]
        caches, alone = ([m.new_cache(96) for _ in prompts] for _ in range(2))
        for p, c, a in zip(prompts, caches, alone):
            m.forward(p[:-1], c)
            m.forward(p[:-1], a)
        want = [m.greedy(p[-1], a, 12) for p, a in zip(prompts, alone)]
        first = m.start_seqs([p[-1] for p in prompts], caches, 5)
        second = first.follow(4)
        third = second.follow(3)
        got = np.concatenate([first.ids(), second.ids(), third.ids()], 1)
        assert got.tolist() == want, seqs
        assert [c.n_past for c in caches] == [len(p) - 1 + 12 for p in prompts]
