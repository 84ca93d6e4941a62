# Session 16, call 5: the decode slowdown after the grouped experts GEMM against the context's local-memory
# reservation (bench/cuda_tg_lmem.py), two fresh processes.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
[ -f .real/q35.gguf ] || python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1
timeout 120 python3 bench/cuda_tg_lmem.py .real/q35.gguf --out $OUT/r 2>&1 | grep -v -i warn | tail -12
timeout 120 python3 bench/cuda_tg_lmem.py .real/q35.gguf --big-stack-first --out $OUT/r 2>&1 | grep -v -i warn | tail -12
tar czf $OUT/s16e.tgz -C $OUT r && rm -rf $OUT/r
