# Prepared in session 16 for the next one (not run yet). The decode slowdown: session 16 found that re-sizing the
# context's local-memory reservation (cuCtxSetLimit of the stack size, even to its own value) leaves the decode graph
# ~10 % slower (kernels unchanged). Does a reservation sized, or kept at its maximum, before the first capture avoid
# it? bench/cuda_tg_lmem.py, one fresh process a variant.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
[ -f .real/q35.gguf ] || python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1
for v in "" --big-stack-first --lmem-max-first; do
  timeout 90 python3 bench/cuda_tg_lmem.py .real/q35.gguf $v --out $OUT/r 2>&1 | grep -v -i warn | grep -v isinstance | tail -7
done
tar czf $OUT/s17b.tgz -C $OUT r && rm -rf $OUT/r
