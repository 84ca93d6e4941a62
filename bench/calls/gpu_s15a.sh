# Session 15, call 1 (prepared in session 14): the greedy step's end as two Triton launches (kel.greedy_next) and the chunked delta rule's
# chunk-to-chunk kernel (chunk_state_kernel): GPU tests, then A/B in fresh processes against the session-start files
# (bench/wip/before/: copies of those two files at commit 2d18770, not committed): Qwen3-8B tg128, Qwen3.5-35B-A3B pp512.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q; python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q) > $OUT/synth.log 2>&1 &
B=/tmp/before; rm -rf $B; mkdir -p $B; cp -r src $B/; cp bench/wip/before/recurrent.py $B/src/zinc/backends/cuda/kernels/
cp bench/wip/before/graph.py $B/src/zinc/backends/cuda/
timeout 200 python3 -m pytest -q -x -p no:cacheprovider tests/backends/test_cuda_kernels.py tests/backends/test_cuda_graph.py \
  tests/backends/test_cuda_recurrent.py -rf 2>&1 | tail -4
res() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $1 || tail -3 ${1%.json}.log; }
while [ ! -f .real/q8b.gguf ] || pgrep -f "synth qwen3-8b" > /dev/null; do sleep 2; done
for i in 1 2; do for w in new before; do
  P=$PWD/src; [ $w = before ] && P=$B/src
  PYTHONPATH=$P timeout 80 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -r 3 --json \
    > $OUT/q8b-tg-$w-$i.json 2> $OUT/q8b-tg-$w-$i.log; res $OUT/q8b-tg-$w-$i.json
done; done
while pgrep -f zinc.synth > /dev/null; do sleep 2; done; ls -la .real; tail -2 $OUT/synth.log
for i in 1 2; do for w in new before; do
  P=$PWD/src; [ $w = before ] && P=$B/src
  PYTHONPATH=$P timeout 90 python3 -m zinc.cli bench -m .real/q35.gguf --backend cuda -p 512 -n 0 -r 5 --json \
    > $OUT/q35-pp-$w-$i.json 2> $OUT/q35-pp-$w-$i.log; res $OUT/q35-pp-$w-$i.json
done; done
