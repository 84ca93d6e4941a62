# Session 16, call 1: (1) does anything set before the first prompt keep the decode fast after f16 cuBLAS products?
# bench/cuda_tg_carveout.py --variant, one fresh process a variant (the slow state is sticky), SM clocks sampled;
# (2) the grouped experts GEMM's int-to-float forms and operand order (bench/cuda_experts_gemm_bench.py --forms) at
# Qwen3.5-35B-A3B's expert shapes.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1
for v in control l1-first half-first ctx-l1 f32-products triton-products control; do
  timeout 90 python3 bench/cuda_tg_carveout.py .real/q8b.gguf --variant $v --out $OUT/r/$v-$RANDOM 2>&1 | grep -v -i warn
done
timeout 270 python3 bench/cuda_experts_gemm_bench.py --shapes 0,2 --tokens 512,2048 --forms --grid 0,3,4,6,7 --out $OUT/r 2>&1 | grep -v -i warn
tar czf $OUT/s16a.tgz -C $OUT r && rm -rf $OUT/r
