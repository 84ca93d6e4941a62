# Session 15, call 5: (1) the CUDA graph tests with prompt chunks of hybrid and MoE models captured; (2) the decode
# slowdown after f16 cuBLAS products against the SM carveout and idle time (bench/cuda_tg_carveout.py);
# (3) Qwen3.5-35B-A3B prompts: grouped GEMM vs pairs matvec, captured vs eager, in one process
# (bench/cuda_q35_gemm_ab.py); (4) zinc bench of Qwen3.5-35B-A3B with this code.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q; python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q) > $OUT/r/synth.log 2>&1 &
timeout 150 python3 -m pytest -q -x -p no:cacheprovider tests/backends/test_cuda_graph.py -rf 2>&1 | tail -4
while [ ! -f .real/q8b.gguf ] || pgrep -f "synth qwen3-8b" > /dev/null; do sleep 2; done
timeout 120 python3 bench/cuda_tg_carveout.py .real/q8b.gguf --out $OUT/r 2>&1 | grep -v -i warn
while pgrep -f zinc.synth > /dev/null; do sleep 2; done
timeout 150 python3 bench/cuda_q35_gemm_ab.py .real/q35.gguf --out $OUT/r 2>&1 | grep -v -i warn | tail -8
timeout 120 python3 -m zinc.cli bench -m .real/q35.gguf --backend cuda -p 512,2048 -n 128 -r 3 --json > $OUT/r/q35.json 2> $OUT/r/q35.log
python3 -c "import json; d=json.load(open('$OUT/r/q35.json')); print(d['verify']['ok'], [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" || tail -3 $OUT/r/q35.log
tar czf $OUT/s15e.tgz -C $OUT r && rm -rf $OUT/r
