# Session 6, call 4 (carry .gl): is dot4I8Packed native on the NVIDIA Vulkan driver (bench/vulkan_dot4_check.py);
# the Vulkan decode matvec sweep with chain timing and the activations-in-workgroup-memory (XS) variants.
. bench/gpu_env.sh
timeout 60 python3 bench/vulkan_dot4_check.py 2>&1 | grep -v XDG
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/backends/test_vulkan_mvq_xs.py 2>&1 | tail -1
timeout 280 python3 bench/vulkan_matvec_sweep.py > $OUT/vulkan_matvec_sweep.log 2>&1; tail -22 $OUT/vulkan_matvec_sweep.log
