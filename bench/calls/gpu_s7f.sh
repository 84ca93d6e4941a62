# Session 7, call 7 (trial, reverted: no configuration faster; V 3 no longer exists in mmvq.py): Q4_K matvec read from the GGUF blocks as they are (V 3: nibbles and the block head in one
# stream per row, the six-bit scales unpacked in the kernel) against the per-field arrays, every Qwen3-8B Q4_K shape.
. bench/gpu_env.sh
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_mmvq.py -x 2>&1 | tail -1
V="2,8,1,1,3,3,2;1,16,1,1,3,3;2,16,1,1,3,3;1,16,1,1,3,3,2;2,8,1,1,3,3;1,8,1,1,3,3,2;1,32,1,1,3,3;4,8,1,1,3,3;2,4,1,1,3,3,2;2,8,1,1,3,1,2;1,16,1,1,3,1"
timeout 400 python3 bench/cuda_mmvq_sweep.py --out $OUT --shapes Q4_K:4096x12288,Q4_K:4096x4096,Q4_K:6144x4096,Q4_K:12288x4096:glu,Q4_K:1024x4096 --variants "$V" > $OUT/sweep.log 2>&1
tail -9 $OUT/sweep.log
python3 -c "
import json
d=json.load(open('$OUT/mmvq-sweep.json'))
for r in d['results']: print(r['shape'], r['cfg'], round(r.get('us',0),2), r.get('error','')[:100])
"
