# Session 30, call e: on an H200 (any card: the A/B pair still runs), the new short-cache row (8 splits of 16 cells,
# the loop unrolled) against the row before, in the decode step, then `zinc bench` pp512 + tg128 and tg128@16384.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
[ -f .real/q8b.gguf ] || python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1
ab() { timeout 110 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log | cut -c1-100; }
L=4611686018427387904
ab --label new
ab --label old --set "ATTN_SPLITS=[(256,4,32),(2048,8,64),(8192,16,64),($L,16,128)]"
ab --label new2
pp() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['device'], d['verify']['ok'], [(t['name'], round(t['tok_s'], 1), round(t['tok_s_sd'], 1)) for t in d['tests']])" $1; }
timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 512 -n 128 -r 3 --json > $OUT/r/bench.json 2> $OUT/r/bench.log; pp $OUT/r/bench.json
timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 16384 -r 3 --json > $OUT/r/deep.json 2> $OUT/r/deep.log; pp $OUT/r/deep.json
rm -f $OUT/r/ab/*.npz
