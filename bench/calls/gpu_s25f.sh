# Session 25, final code (the combine triggering the output projection, norm_quantize 1 block x 4 warps a program):
# zinc bench JSON (pp512 + tg128, tg128@16384), a few more variants (A/B, fresh processes), GPU tests of the
# graph and kernel files.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
pp() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], d['verify'].get('ok'), [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $1 || tail -3 ${1%.json}.log; }
ab() { timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log | cut -c1-55; }
ab --label base1
ab --label w8 --set mmvq.NORM_WARPS=8
ab --label v6lm2qx1 --set "mmvq.SHAPE_CONFIG={(14,1024,4096,False):(2,1,1,1,1,2,2),(14,151936,4096,False):(2,1,1,1,1,2,1)}" --set mmvq.QX_BLOCKS=1
ab --label s24 --set mmvq.NORM_BLOCKS=2 --set mmvq.NORM_WARPS=2 --set "ATTN_PDL=((0,0),(0,0))"
ab --label base2
timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 512 -n 128 -r 3 --json > $OUT/r/bench.json 2> $OUT/r/bench.log; pp $OUT/r/bench.json
timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 16384 -r 3 --json > $OUT/r/deep.json 2> $OUT/r/deep.log; pp $OUT/r/deep.json
rm -f $OUT/r/ab/*.npz; tar czf $OUT/r/ab.tgz -C $OUT/r ab; rm -rf $OUT/r/ab
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_graph.py tests/backends/test_cuda_kernels.py tests/backends/test_cuda_mmvq.py 2>&1 | tail -3
