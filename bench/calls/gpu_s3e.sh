# Session 3, call E: Vulkan on the H200 (carry .gl): tests, the matvec sweep, the decode profile, the bench.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
python3 -m pip install -q --no-deps --no-index .gl/wheels/*cp312*.whl .gl/wheels/pycparser*.whl .gl/wheels/rendercanvas*.whl .gl/wheels/wgpu*.whl >/dev/null 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
Z="python3 -c 'import sys; from zinc.cli import main; sys.exit(main(sys.argv[1:]))'"
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/backends/test_vulkan.py 2>&1 | tail -3
timeout 200 python3 bench/vulkan_matvec_sweep.py --reps 10 > $OUT/vulkan_matvec_sweep.log 2>&1; tail -25 $OUT/vulkan_matvec_sweep.log
timeout 100 python3 -m zinc.backends.vulkan.profile .real/q8b.gguf --json $OUT/vk-prof.json 2>&1 | tail -25
timeout 120 sh -c "$Z bench -m .real/q8b.gguf --backend vulkan -p 512 -n 128 -r 2 --json" > $OUT/bench-vulkan.json 2> $OUT/bench-vulkan.log; tail -4 $OUT/bench-vulkan.log
