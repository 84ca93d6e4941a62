# Session 39, call c (any card; gpu_s39a.sh cut to the device time left): the GPU tests of batched decode while the
# synthetic Qwen3-8B Q4_K_M is written, then its zinc bench tg128 and tg128 of 8, 32 and 64 sequences decoding
# together (after 128 prompt tokens each; llama-batched-bench's anchor: 4,289 tok/s at 64).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
date
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1 &
timeout 150 python3 -m pytest -q -x -p no:cacheprovider tests/backends/test_cuda_seqs.py tests/backends/test_cuda_graph.py \
  tests/backends/test_cuda_kernels.py -k "seqs or forward_seqs or tiles_gemm" 2>&1 | tail -8
wait; date
timeout 200 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 --parallel 8,64 -r 3 --json \
  > $OUT/r/s39_par.json 2> $OUT/r/s39_par.log
tail -12 $OUT/r/s39_par.log
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['device'], d['verify'], [(t['name'], round(t['tok_s'], 1), round(t['tok_s_sd'], 1)) for t in d['tests']])" $OUT/r/s39_par.json
date
