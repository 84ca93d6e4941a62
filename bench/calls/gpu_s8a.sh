# Session 8, call 1 (carry .gl, .snap): CUDA tests after rope_qk_attention (the decode attention's split programs
# also do the Q/K norms, the rope and the KV write: one launch fewer per layer); decode A/B against 577bc8a; profile.
. bench/gpu_env.sh
mkdir -p .real
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &
timeout 300 python3 -m pytest -q -p no:cacheprovider tests/backends/ -k cuda 2>&1 | tail -4
wait
ab tg 2 "-m .real/q8b.gguf --backend cuda -p 0 -n 128 -r 2" HEAD 577bc8a
ab tgd 1 "-m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 16384 -r 2" HEAD 577bc8a
timeout 40 python3 bench/cuda_step_profile.py .real/q8b.gguf --out $OUT 2>&1 | sed -n 1,10p
