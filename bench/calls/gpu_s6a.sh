# Session 6, call 1 (carry .gl): per-dispatch cost on the NVIDIA Vulkan driver (bench/vulkan_dispatch_cost.py)
# and what programmatic dependent launch saves on a chain of Triton kernels in a CUDA graph (bench/cuda_pdl_check.py).
. bench/gpu_env.sh
timeout 150 python3 bench/cuda_pdl_check.py 2>&1 | tail -20
timeout 150 python3 bench/vulkan_dispatch_cost.py 2>&1 | grep -v XDG | tail -14
