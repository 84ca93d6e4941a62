# Session 3, call 1: GPU tests of the prefill flash kernel and prompt-chunk graphs, then the 8B bench.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
Z="python3 -c 'import sys; from zinc.cli import main; sys.exit(main(sys.argv[1:]))'"
mkdir -p .real
[ -f .real/q8b.gguf ] || python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/synth.log 2>&1 &
timeout 240 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_flash.py tests/backends/test_cuda_graph.py tests/backends/test_cuda_kernels.py 2>&1 | tail -4
wait
timeout 150 sh -c "$Z bench -m .real/q8b.gguf --backend cuda -p 512,2048 -n 128 --json" > $OUT/bench-cuda.json 2> $OUT/bench-cuda.log; tail -9 $OUT/bench-cuda.log
timeout 90 python3 - <<'PY' > $OUT/prefill.log 2>&1; cat $OUT/prefill.log
import time, numpy as np, torch
from zinc.api import load
m = load(".real/q8b.gguf", backend="cuda", n_ctx=2048)
ids = [int(i) for i in np.random.default_rng(0).integers(0, m.n_vocab, 512)]
c = m.new_cache(2048)
for r in range(5):
    c.reset(); torch.cuda.synchronize(); t0 = time.perf_counter()
    m.forward(ids, c, last_only=True); torch.cuda.synchronize()
    print(f"prefill 512 run {r}: {(time.perf_counter() - t0) * 1e3:.1f} ms", flush=True)
from torch.profiler import profile, ProfilerActivity
c.reset()
with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
    m.ops.graphs_enabled = False
    m.forward(ids, c, last_only=True); torch.cuda.synchronize()
print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=18))
PY
