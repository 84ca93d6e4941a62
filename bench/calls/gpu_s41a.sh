# Session 41, call a (any card): the batched-decode GPU tests (no -x: every failure shown) while the synthetic
# (session 41: the device sampler's tests, sampled_decode.py's rows: drawn on the device / best logits / whole rows.)
# Qwen3-8B Q4_K_M is written; then zinc bench tg128 of 8 and 64 sequences decoding together (after 128 prompt
# tokens each; llama-batched-bench's anchor 4,289 tok/s at 64), verified first against each sequence alone; a
# request's decode with default sampling from the best logits vs whole rows (bench/sampled_decode.py); the kernels
# of a 64-sequence step (bench/cuda_step_profile.py --seqs 64).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
date
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1 &
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_seqs.py tests/backends/test_cuda_graph.py \
  tests/backends/test_cuda_kernels.py tests/backends/test_cuda_recurrent.py -k "seqs or tiles_gemm or top_logits or sample or follow" \
  > $OUT/r/tests.log 2>&1
tail -30 $OUT/r/tests.log | cut -c1-300
wait; date
timeout 200 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 --parallel 8,64 -r 2 --json \
  > $OUT/r/s41_par.json 2> $OUT/r/s41_par.log
tail -15 $OUT/r/s41_par.log | cut -c1-300
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['device'], d['verify'], [(t['name'], round(t['tok_s'], 1), round(t['tok_s_sd'], 1)) for t in d['tests']])" $OUT/r/s41_par.json
date
timeout 150 python3 bench/sampled_decode.py .real/q8b.gguf -n 128 --seqs 8 --reps 2 2>&1 | tail -10
date
timeout 80 python3 bench/cuda_step_profile.py .real/q8b.gguf --seqs 64 --depth 128 --steps 16 --out $OUT/r 2>&1 | tail -22
date
