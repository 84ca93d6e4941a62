# Session 42, call b (any card): the GPU tests of sessions 39-41 again (the conv kernel's sequence table fixed, the
# greedy argmax loaded before its capture), each file its own pytest, while the synthetic Qwen3-8B Q4_K_M is written;
# zinc bench tg128 and tg128 of 8 and 64 sequences with the tile GEMM's per-shape configurations (`tiles_shape`);
# the tile GEMM's default at 16, 64, 128 rows against a few alternatives; the engine's sampled decode (1 and 8
# requests); the kernels of a 64-sequence step.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
date
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1 &
for f in test_cuda_seqs test_cuda_graph test_cuda_kernels test_cuda_recurrent; do
  timeout 120 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE tests/backends/$f.py \
    -k "seqs or tiles_gemm or top_logits or sample or follow or graphs or graph_replay or matmul" > $OUT/r/t_$f.log 2>&1
  echo "== $f rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed|Fatal|^E  " $OUT/r/t_$f.log | head -12 | cut -c1-300
done
wait; date
timeout 200 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 --parallel 8,64 -r 2 --json \
  > $OUT/r/s42_par.json 2> $OUT/r/s42_par.log
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['device'], d['verify'], [(t['name'], round(t['tok_s'], 1), round(t['tok_s_sd'], 1)) for t in d['tests']])" $OUT/r/s42_par.json || tail -5 $OUT/r/s42_par.log
date
GRID='64,4,3,1,1;32,4,3,0,1;32,4,3,1,1;16,4,3,1,4;16,4,3,0,4;64,4,3,0,8;64,4,3,1,8;32,4,3,1,4'
timeout 120 python3 bench/cuda_tiles_gemm_bench.py --out $OUT/r --rows 16,64,128 --shapes 0,1,2,3,4,5 --configs "$GRID" 2>&1 | tail -20 | cut -c1-250
date
timeout 120 python3 bench/sampled_decode.py .real/q8b.gguf -n 64 --seqs 8 --reps 2 2>&1 | tail -13
date
timeout 80 python3 bench/cuda_step_profile.py .real/q8b.gguf --seqs 64 --depth 128 --steps 16 --out $OUT/r 2>&1 | grep -E "wall|gemm|split|norm"
date
