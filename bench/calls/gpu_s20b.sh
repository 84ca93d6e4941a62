# (oldsrc/: a copy of HEAD's src made for the run, not kept)
# Session 20: the weights-first mmvs loop (PDL dropped after gpu_s20a): logits against the session-start tree
# (oldsrc/), a sweep of the streams configurations with the new loop, zinc bench Qwen3-8B.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
pp() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], d['verify'].get('ok'), [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $1 || tail -3 ${1%.json}.log; }
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
V="1,1,1,1,1,2,1;1,1,1,1,1,2,2;1,2,1,1,1,2,1;1,2,1,1,1,2,2;2,1,1,1,1,2,1;2,1,1,1,1,2,2;2,2,1,1,1,2,1;2,2,1,1,1,2,2;4,1,1,1,1,2,1;4,1,1,1,1,2,2;4,2,1,1,1,2,1;4,2,1,1,1,2,2;2,1,2,1,1,2,1;2,4,1,1,1,2,1"
S="Q4_K:6144x4096,Q4_K:5120x4096,Q4_K:4096x4096,Q4_K:12288x4096:glu,Q4_K:4096x12288,Q6_K:4096x12288,Q4_K:1024x4096,Q6_K:1024x4096"
timeout 280 python3 bench/cuda_mmvq_sweep.py --out $OUT/r --shapes $S --variants "$V" > $OUT/r/sweep.log 2>&1; tail -12 $OUT/r/sweep.log
wait
for i in 1 2; do
  PYTHONPATH=$PWD/oldsrc/src timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --label old$i --out $OUT/r 2>>$OUT/r/err.log
  timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --label new$i --out $OUT/r 2>>$OUT/r/err.log
done
python3 bench/cuda_tree_ab.py --compare $OUT/r/tree-old1.npz $OUT/r/tree-new1.npz
python3 bench/cuda_tree_ab.py --compare $OUT/r/tree-old1.npz $OUT/r/tree-old2.npz | head -2
timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 512,2048 -n 128 -r 3 --json > $OUT/r/q8b.json 2> $OUT/r/q8b.log; pp $OUT/r/q8b.json
grep -v -i warn $OUT/r/err.log | tail -3
tar czf $OUT/s20b.tgz -C $OUT r && rm -rf $OUT/r
