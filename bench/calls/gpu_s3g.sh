# Session 3, last call (carry .gl): Vulkan tests, profile and bench on the H200; CUDA decode after the split norm.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
python3 -m pip install -q --no-deps --no-index .gl/wheels/*cp312*.whl .gl/wheels/pycparser*.whl .gl/wheels/rendercanvas*.whl .gl/wheels/wgpu*.whl >/dev/null 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
Z="python3 -c 'import sys; from zinc.cli import main; sys.exit(main(sys.argv[1:]))'"
mkdir -p .real
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &
timeout 90 python3 -m pytest -q -p no:cacheprovider tests/backends/test_vulkan.py 2>&1 | tail -2
wait
timeout 60 python3 -m zinc.backends.vulkan.profile .real/q8b.gguf --json $OUT/vk-prof.json 2>&1 | tail -16
timeout 120 sh -c "$Z bench -m .real/q8b.gguf --backend vulkan -p 512 -n 128 -r 2 --json" > $OUT/bench-vulkan.json 2> $OUT/bench-vulkan.log; tail -6 $OUT/bench-vulkan.log
timeout 60 sh -c "$Z bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -r 2 --json" > $OUT/bench-cuda.json 2> $OUT/bench-cuda.log; tail -2 $OUT/bench-cuda.log
timeout 30 python3 bench/cuda_step_profile.py .real/q8b.gguf --out $OUT 2>&1 | sed -n 1,6p
