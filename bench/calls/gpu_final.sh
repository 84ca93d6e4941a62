# One device call, most important first (the call may be cut at its time limit; $OUT comes back):
# CUDA tests on the GPU, the Qwen3-8B benches (CUDA, then Vulkan through NVIDIA's driver), every
# family on CUDA vs NumPy, depth benches, greedy-on-device check + prefill host profile, decode profile.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
Z="python3 -c 'import sys; from zinc.cli import main; sys.exit(main(sys.argv[1:]))'"
nvidia-smi -L
python3 -m zinc.synth qwen3-8b -o /tmp/q8b.gguf --ftype Q4_K_M -q > $OUT/synth.log 2>&1 &
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_mmvq.py tests/backends/test_cuda_kernels.py \
  tests/backends/test_cuda_graph.py tests/backends/test_cuda_ops_more.py > $OUT/gpu-tests.log 2>&1; tail -3 $OUT/gpu-tests.log
wait
timeout 120 sh -c "$Z bench -m /tmp/q8b.gguf --backend cuda -p 512,2048 -n 128 --json" > $OUT/bench-cuda.json 2> $OUT/bench-cuda.log; tail -4 $OUT/bench-cuda.log
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
python3 -m pip install -q --no-deps --no-index .gl/wheels/*cp312*.whl .gl/wheels/pycparser*.whl .gl/wheels/rendercanvas*.whl .gl/wheels/wgpu*.whl > /dev/null 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
timeout 150 sh -c "$Z bench -m /tmp/q8b.gguf --backend vulkan -p 64 -n 32 --json" > $OUT/bench-vulkan.json 2> $OUT/bench-vulkan.log; tail -4 $OUT/bench-vulkan.log
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/backends/test_vulkan.py > $OUT/vk-tests.log 2>&1; tail -2 $OUT/vk-tests.log
timeout 150 python3 -m zinc.backends.cuda.check_families --out $OUT > $OUT/families.log 2>&1; tail -32 $OUT/families.log
timeout 120 sh -c "$Z bench -m /tmp/q8b.gguf --backend cuda -p 0 -n 128 -d 4096,16384 -r 2 --json" > $OUT/bench-cuda-depth.json 2> $OUT/bench-cuda-depth.log; tail -3 $OUT/bench-cuda-depth.log
timeout 90 python3 - <<'PY' > $OUT/prefill-host.log 2>&1; head -45 $OUT/prefill-host.log
# greedy on the device vs one step at a time, and where the host time of an eager 512-token prefill goes
import cProfile, pstats, time, numpy as np, torch
from zinc.api import load
m = load("/tmp/q8b.gguf", backend="cuda", n_ctx=1024)
ids = [int(i) for i in np.random.default_rng(0).integers(0, m.n_vocab, 512)]
c1, c2 = m.new_cache(1024), m.new_cache(1024)
m.forward(ids[:32], c1); m.forward(ids[:32], c2)
tok, want = ids[32], []
for _ in range(24):
    tok = int(np.argmax(m.forward([tok], c1, last_only=True)[-1])); want.append(tok)
got = m.greedy(ids[32], c2, 24)
print("greedy on device == stepwise argmax:", got == want, sum(a == b for a, b in zip(got, want)), "/ 24", flush=True)
m.forward(ids, m.new_cache(1024), last_only=True)
torch.cuda.synchronize(); t0 = time.perf_counter()
m.forward(ids, m.new_cache(1024), last_only=True); torch.cuda.synchronize()
print("prefill 512 wall ms", (time.perf_counter() - t0) * 1e3, flush=True)
pr = cProfile.Profile(); pr.enable()
m.forward(ids, m.new_cache(1024), last_only=True); torch.cuda.synchronize()
pr.disable(); pstats.Stats(pr).sort_stats("tottime").print_stats(22)
PY
timeout 120 python3 -m zinc.backends.cuda.profile --out $OUT/prof --skip check,matvec,prefill,small,tiny --model /tmp/q8b.gguf > $OUT/profile.log 2>&1; grep -A30 "## decode graph" $OUT/profile.log | head -34
