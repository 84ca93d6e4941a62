# Session 32, call b (prepared; run with carry ["tmp/llama"]): llama.cpp and zinc side by side on whichever card
# comes, as the issue allows ("llama.cpp built on the same GPU from the llama-cpp-python sdist and run side by side"):
# `llama-bench` of the llama-cpp-python 0.3.36 sdist's llama.cpp (the anchors' tree), built by session 32 on the
# development machine (`bench/build_llama_bench.sh`: CUDA 13.0, sm_90, static ggml, -ngl 99 -fa 1 as the anchors
# ran it) on the same synthetic Qwen3-8B Q4_K_M file as `zinc bench`, then `zinc bench` of the tree.
. bench/calls/ab_env.sh
LB=tmp/llama/llama-bench
[ -f $LB.xz ] && python3 -c "import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" $LB.xz $LB && chmod +x $LB
CUB=$(find / -name 'libcublas.so.13' -not -path '/proc/*' 2>/dev/null | head -1)
export LD_LIBRARY_PATH=$(dirname "$CUB"):/usr/local/cuda/lib64:$LD_LIBRARY_PATH
echo "cublas: $CUB"
ldd $LB | grep -E "not found|cublas|cudart|libcuda" 
LLB() { timeout 240 $LB -m .real/q8b.gguf -ngl 99 -fa 1 -r 3 -o json "$@"; }
LLB -p 512 -n 128 > $OUT/r/llama.json 2> $OUT/r/llama.log; date
LLB -p 0 -n 128 -d 4096,16384 > $OUT/r/llama-deep.json 2> $OUT/r/llama-deep.log; date
python3 - $OUT/r/llama.json $OUT/r/llama-deep.json <<'P'
import json, sys
for f in sys.argv[1:]:
    try:
        for r in json.load(open(f)):
            print("llama.cpp", r.get("gpu_info"), f"pp{r['n_prompt']} tg{r['n_gen']} d{r.get('n_depth', 0)}",
                  round(r["avg_ts"], 1), "+-", round(r["stddev_ts"], 1))
    except Exception as e:
        print(f, "unreadable:", e)
P
zb bench -p 512 -n 128
zb deep -p 0 -n 128 -d 16384
zb d4k -p 0 -n 128 -d 4096
