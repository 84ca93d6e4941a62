# Session 15, call 4: (1) which prompt ingredient leaves the decode slower (bench/cuda_tg_state.py, host enqueue and
# GPU times of the captured step's replays); (2) Qwen3.5-35B-A3B's prompt expert matmuls as the grouped GEMM now that
# its prompt is GPU-bound: pp512/pp2048 in fresh processes, new rule vs the session-start ops.py
# (bench/wip/before/ops.py, not committed), alternating; (3) the expert-GEMM and ops tests on the GPU.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q; python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q) > $OUT/r/synth.log 2>&1 &
B=/tmp/before; rm -rf $B; mkdir -p $B; cp -r src $B/; cp bench/wip/before/ops.py $B/src/zinc/backends/cuda/
timeout 150 python3 -m pytest -q -x -p no:cacheprovider tests/backends/test_cuda_experts_gemm.py tests/backends/test_cuda_ops_more.py 2>&1 | tail -2
while [ ! -f .real/q8b.gguf ] || pgrep -f "synth qwen3-8b" > /dev/null; do sleep 2; done
timeout 150 python3 bench/cuda_tg_state.py .real/q8b.gguf --out $OUT/r 2>&1 | grep -v -i warn
res() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], d['verify']['ok'], [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $1 || tail -3 ${1%.json}.log; }
while pgrep -f zinc.synth > /dev/null; do sleep 2; done
for i in 1 2; do for w in new before; do
  P=$PWD/src; [ $w = before ] && P=$B/src
  PYTHONPATH=$P timeout 100 python3 -m zinc.cli bench -m .real/q35.gguf --backend cuda -p 512,2048 -n 0 -r 3 --json \
    > $OUT/r/q35-pp-$w-$i.json 2> $OUT/r/q35-pp-$w-$i.log; res $OUT/r/q35-pp-$w-$i.json
done; done
timeout 100 python3 bench/cuda_prefill_profile.py .real/q35.gguf --tokens 512 --out $OUT/r 2>&1 | grep -v -i warn | tail -10
tar czf $OUT/s15d.tgz -C $OUT r && rm -rf $OUT/r
