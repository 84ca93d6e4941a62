# Prepared in session 16 for the next one (not run yet). (1) The decode slowdown: session 16 found that re-sizing the
# context's local-memory reservation (cuCtxSetLimit of the stack size, even to its own value) leaves the decode
# graph ~10 % slower (kernels unchanged); does a reservation sized or kept at its maximum before the first capture
# avoid it? bench/cuda_tg_lmem.py, one fresh process a variant. (2) The qwen35-tiny Q8_0 family check (one flip of 31
# positions after the chunk_prep_kernel change, mean KL 8.7e-5) and the recurrent tests.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1 &
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_recurrent.py -rf --tb=short 2>&1 | tail -4
timeout 60 python3 -m zinc.backends.cuda.check_families --out $OUT/r --families qwen35-tiny,qwen35moe-tiny --ftypes Q8_0,Q4_K_M,Q6_K 2>&1 | grep -v Warn | tail -7
while pgrep -f zinc.synth > /dev/null; do sleep 2; done
for v in "" --big-stack-first --lmem-max-first; do
  timeout 90 python3 bench/cuda_tg_lmem.py .real/q35.gguf $v --out $OUT/r 2>&1 | grep -v -i warn | grep -v isinstance | tail -7
done
tar czf $OUT/s17a.tgz -C $OUT r && rm -rf $OUT/r
