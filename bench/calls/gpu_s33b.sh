# Session 33, call b: every family's tiny model at every type (check_families) with the tree's defaults (the
# short caches' clusters on), then llama.cpp's pp512 again (session 33's first read: 9,427 +- 1,222) with 5 runs.
. bench/calls/ab_env.sh
timeout 400 python3 -m zinc.backends.cuda.check_families --out $OUT/r/cf 2>&1 | tail -72
LB=tmp/llama/llama-bench
python3 -c "import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" $LB.xz $LB && chmod +x $LB
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda-13.0/targets/x86_64-linux/lib:$LD_LIBRARY_PATH
timeout 120 $LB -m .real/q8b.gguf -ngl 99 -fa 1 -r 5 -p 512 -n 0 -o json > $OUT/r/llama-pp.json 2> $OUT/r/llama-pp.log
python3 -c "
import json,sys
for r in json.load(open(sys.argv[1])): print('llama.cpp', r['gpu_info'], 'pp', r['n_prompt'], round(r['avg_ts'], 1), '+-', round(r['stddev_ts'], 1), [round(x) for x in r['samples_ts']])
" $OUT/r/llama-pp.json
