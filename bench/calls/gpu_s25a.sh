# Prepared in session 24 for the next H200 (not run yet): the PDL decode (ops.PDL) measured where the anchors were.
# zinc bench of Qwen3-8B Q4_K_M pp512 + tg128 and tg128@16384 (JSON for bench/results), and tg128 of this tree with
# PDL on and off in fresh processes (same machine).
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
pp() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], d['verify'].get('ok'), [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $1 || tail -3 ${1%.json}.log; }
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 512 -n 128 -r 3 --json > $OUT/r/bench.json 2> $OUT/r/bench.log; pp $OUT/r/bench.json
timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 16384 -r 3 --json > $OUT/r/deep.json 2> $OUT/r/deep.log; pp $OUT/r/deep.json
ab() { timeout 80 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log; }
ab --label pdl1
ab --label off1 --set PDL=False
rm -f $OUT/r/ab/*.npz
