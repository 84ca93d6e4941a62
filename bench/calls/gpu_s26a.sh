# Prepared in session 25 for the next GPU session (not run yet): session 25's code where the anchors were measured
# (an H200 if one comes): zinc bench JSON (pp512 + tg128, tg128@16384); then one f16 operand each for the decode
# attention's query rows and probabilities (ops.ATTN_HILO=False, as llama.cpp's flash attention rounds them) against
# the hi + lo halves, and the split loop's whole blocks unmasked (ops.ATTN_FULL_LOOP), tg128 and tg128@16384 (A/B,
# fresh processes), and every family's tiny model with the f16 operands.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
pp() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], d['verify'].get('ok'), [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $1 || tail -3 ${1%.json}.log; }
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 512 -n 128 -r 3 --json > $OUT/r/bench.json 2> $OUT/r/bench.log; pp $OUT/r/bench.json
timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 16384 -r 3 --json > $OUT/r/deep.json 2> $OUT/r/deep.log; pp $OUT/r/deep.json
ab() { timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log | cut -c1-90; }
ab --label hilo --depth 16384
ab --label f16ops --depth 16384 --set ATTN_HILO=False
ab --label full --depth 16384 --set ATTN_FULL_LOOP=True
ab --label f16full --depth 16384 --set ATTN_HILO=False --set ATTN_FULL_LOOP=True
ab --label hilo2 --depth 16384
python3 bench/cuda_tree_ab.py --compare $OUT/r/ab/tree-hilo.npz $OUT/r/ab/tree-f16ops.npz > $OUT/r/cmp.txt
python3 bench/cuda_tree_ab.py --compare $OUT/r/ab/tree-hilo.npz $OUT/r/ab/tree-full.npz >> $OUT/r/cmp.txt
rm -f $OUT/r/ab/*.npz
