# Session 16, call 2: (1) the grouped experts GEMM, f16 tiles (MODE 2), swapped or not, over block sizes at prompt
# chunk sizes, Qwen3.5 and GPT-OSS expert shapes; (2) zinc bench of Qwen3-8B pp512 + tg128 in one process (does the
# decode-after-prompt slowdown of session 15 show on this machine?); (3) the CUDA graph tests (gemma4moe prompt chunks).
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
C="0,64,4,3,0,0;0,64,4,3,2,0;64,64,4,3,2,0;64,64,4,4,2,0;64,128,8,3,2,0;32,64,4,3,2,0"
C="$C;16,64,4,3,2,1;32,64,4,2,2,1;32,64,4,3,2,1;32,64,4,4,2,1;32,32,4,3,2,1;32,128,4,3,2,1;32,128,8,3,2,1;32,64,8,3,2,1;64,64,4,3,2,1;64,128,8,3,2,1"
timeout 330 python3 bench/cuda_experts_gemm_bench.py --shapes 0,2,1,3,4 --tokens 128,512,2048 --configs "$C" --out $OUT/r 2>&1 | grep -v -i warn
while pgrep -f zinc.synth > /dev/null; do sleep 2; done
timeout 100 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 512 -n 128 -r 3 --json > $OUT/r/q8b.json 2> $OUT/r/q8b.log
python3 -c "import json; d=json.load(open('$OUT/r/q8b.json')); print(d['verify']['ok'], [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" || tail -3 $OUT/r/q8b.log
timeout 150 python3 -m pytest -q -x -p no:cacheprovider tests/backends/test_cuda_graph.py -rf 2>&1 | tail -3
tar czf $OUT/s16b.tgz -C $OUT r && rm -rf $OUT/r
