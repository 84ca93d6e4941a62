# Session 16, call 2: the CUDA graph and experts GEMM tests (the gemma4moe prompt-chunk case not yet GPU-run), then
# zinc bench of Qwen3.5-35B-A3B with the final prompt code.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
(python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
timeout 200 python3 -m pytest -q -x -p no:cacheprovider tests/backends/test_cuda_graph.py tests/backends/test_cuda_experts_gemm.py -rf 2>&1 | tail -4
while pgrep -f zinc.synth > /dev/null; do sleep 2; done
timeout 150 python3 -m zinc.cli bench -m .real/q35.gguf --backend cuda -p 512,2048 -n 128 -r 3 --json > $OUT/r/q35.json 2> $OUT/r/q35.log
python3 -c "import json; d=json.load(open('$OUT/r/q35.json')); print(d['verify']['ok'], [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" || tail -3 $OUT/r/q35.log
tar czf $OUT/s16b.tgz -C $OUT r && rm -rf $OUT/r
