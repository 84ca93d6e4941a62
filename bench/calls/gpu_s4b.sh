# Session 4, call 2 (carry .gl, .snap = git archive of HEAD's src): Vulkan tests/profile/bench after the
# multi-workgroup norm and the two-step attention; the read-bandwidth ceiling per size.
SRC=.snap/src . bench/gpu_env.sh
mkdir -p .real
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &
timeout 60 python3 .snap/cuda_read_ceiling.py --out $OUT 2>&1 | tail -8
wait
timeout 60 python3 -m zinc.backends.vulkan.profile .real/q8b.gguf --json $OUT/vk-prof.json 2>&1 | tail -16
timeout 120 sh -c "$Z bench -m .real/q8b.gguf --backend vulkan -p 512 -n 128 -r 2 --json" > $OUT/bench-vulkan.json 2> $OUT/bench-vulkan.log; tail -4 $OUT/bench-vulkan.log
cd .snap
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/backends/test_vulkan.py 2>&1 | tail -3
