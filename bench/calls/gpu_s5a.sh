# Session 5, call 1 (carry .gl, .snap/lead = main + the V0 matvec unrolled U times): mmvq sweep of the
# decode shapes with more loads in flight (V0 U 2-4 for Q6_K), Qwen3.5-35B-A3B step profile, Vulkan profile.
SRC=.snap/lead/src . bench/gpu_env.sh
mkdir -p .real
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1; python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > $OUT/synth35.log 2>&1) &
(cd .snap/lead && PYTHONPATH=$PWD/src timeout 300 python3 bench/cuda_mmvq_sweep.py --out $OUT --shapes Q6_K:4096x12288,Q4_K:4096x4096,Q4_K:5120x4096,Q4_K:6144x4096,Q6_K:1024x4096,Q4_K:1024x4096,Q4_K:4096x12288 --variants "1,16,1,1;2,16,1,1,3,1,2;1,16,1,1,3,1,2;4,16,1,1,3,1,1;2,8,1,1,3,1,2;1,8,1,1,3,1,4;1,16,1,1,3,0,2;1,16,1,1,3,0,3;2,16,1,1,3,0,2;1,8,1,1,3,0,4;1,32,1,1,3,0,2;1,16,1,1,2,0,2" > $OUT/sweep.log 2>&1; tail -14 $OUT/sweep.log)
timeout 60 python3 -m zinc.backends.vulkan.profile .real/q8b.gguf --json $OUT/vk-prof.json 2>&1 | sed -n 2,16p
wait
timeout 90 python3 bench/cuda_step_profile.py .real/q35.gguf --out $OUT 2>&1 | sed -n 1,30p
