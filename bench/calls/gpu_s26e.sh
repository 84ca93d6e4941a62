# Session 26, call e: the split rows adopted from call d (16 splits of 64 cells for 2,048-8,192 cells, 16 of 128 past
# that) against call d's (16 of 128, 32 of 64) at tg128@4096 and tg128@16384, and two settings tuned on H100s in
# sessions 24-25 (4 splits of 32 cells under 256 cells; norm_quantize 1 block x 4 warps) against their old values
# at tg128 (fresh processes, one machine); first the attention tests through the backend; last `zinc bench` JSON at
# depth 16384 with the new rows. Prepared in session 26; ran in session 27 on an H100 (asked for an H200).
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
[ -f .real/q8b.gguf ] || python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1 &
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_kernels.py -k test_attention 2>&1 | tail -2
wait
ab() { timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log | cut -c1-80; }
O="(8192,16,128),(4611686018427387904,32,64)]"
ab --label d1 --depth 16384
ab --label dold --depth 16384 --set "ATTN_SPLITS=[(256,4,32),(2048,8,64),$O"
ab --label m1 --depth 4096
ab --label t2b64 --set "ATTN_SPLITS=[(256,2,64),(2048,8,64),(8192,16,64),(4611686018427387904,16,128)]"
ab --label tnorm22 --set mmvq.NORM_BLOCKS=2 --set mmvq.NORM_WARPS=2
ab --label t1
rm -f $OUT/r/ab/*.npz
timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 0 -n 128 -d 16384 -r 3 --json > $OUT/r/deep.json 2> $OUT/r/deep.log
python3 -c "import json; d=json.load(open('$OUT/r/deep.json')); print(d['device'], d['verify']['ok'], [(t['name'], round(t['tok_s'], 1)) for t in d['tests']])"
