# Prepared in session 15 for the next one (not run yet): does anything set before the first prompt keep the decode
# fast after f16 cuBLAS products? bench/cuda_tg_carveout.py, one fresh process a variant (the slow state is sticky).
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1
for v in control l1-first half-first ctx-l1 control; do
  timeout 90 python3 bench/cuda_tg_carveout.py .real/q8b.gguf --variant $v --out $OUT/r 2>&1 | grep -v -i warn
done
tar czf $OUT/s16a.tgz -C $OUT r && rm -rf $OUT/r
