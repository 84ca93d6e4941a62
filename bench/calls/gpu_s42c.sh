# Session 42, call c (any card): while the synthetic Qwen3-8B Q4_K_M is written, the tile GEMM at K / V's shapes
# (N 1,024) at 16, 64, 128 rows, twice (the first pass of call b looked slow throughout); then zinc bench tg128
# and tg128 of 8 and 64 sequences (narrow weights now 64 columns in 8 splits); the engine's sampled decode with one
# warmed engine a row (1 and 8 requests, 128 tokens).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
date
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1 &
GRID='64,4,3,0,8;16,4,3,0,4;32,4,3,0,1;64,4,3,0,1'
for i in 1 2; do
timeout 60 python3 bench/cuda_tiles_gemm_bench.py --out $OUT/r --rows 16,64,128 --shapes 1,2 --configs "$GRID" 2>&1 | tail -6 | cut -c1-250
done
wait; date
timeout 200 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 --parallel 8,64 -r 2 --json \
  > $OUT/r/s42c_par.json 2> $OUT/r/s42c_par.log
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['device'], d['verify'], [(t['name'], round(t['tok_s'], 1), round(t['tok_s_sd'], 1)) for t in d['tests']])" $OUT/r/s42c_par.json || tail -5 $OUT/r/s42c_par.log
date
timeout 150 python3 bench/sampled_decode.py .real/q8b.gguf -n 128 --seqs 8 --reps 2 2>&1 | tail -13 | tee $OUT/r/s42c_sampled.txt
date
