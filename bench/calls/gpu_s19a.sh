# Prepared in session 18 for the next one (not run yet). (1) Which graph content makes the 4th model-step graph of a
# process (and every graph after it) 0.35 us a kernel slower to launch: graphs of 330 nodes of each kind
# (bench/cuda_graph_count.py; torch's in-place kernels did not: 12 graphs at 0.93 us a node); (2) zinc bench Qwen3-8B
# after the rope's own cos / sin (attn_split without spills): tg128 in a fresh process, then pp512, pp2048, tg128;
# (3) a 4th cache's decode written into an instantiated graph (cuGraphExecUpdate) instead of a 4th instantiation:
# the same tokens, and fast? (bench/cuda_graph_update.py). If so, graph.py can recycle the LRU's executable graphs.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
pp() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], d['verify'].get('ok'), [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $1; }
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
for k in alloc triton32 triton16 memcpy; do
  timeout 60 python3 bench/cuda_graph_count.py --kind $k --graphs 8 --out $OUT/r/g 2>&1 | grep -v -i warn | tr '\n' ' ' | tr -s ' '; echo
done
wait
timeout 100 python3 bench/cuda_graph_update.py .real/q8b.gguf --out $OUT/r/u 2>&1 | grep -v -i warn | grep -v "^zinc" | tail -9
timeout 100 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -r 3 --json > $OUT/r/q8b-tg.json 2> $OUT/r/q8b-tg.log; pp $OUT/r/q8b-tg.json
timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 512,2048 -n 128 -r 3 --json > $OUT/r/q8b.json 2> $OUT/r/q8b.log; pp $OUT/r/q8b.json
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_graph.py 2>&1 | tail -2
tar czf $OUT/s19a.tgz -C $OUT r && rm -rf $OUT/r
