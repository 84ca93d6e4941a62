# Session 33, call c (kind nvidia-h200, carry ["tmp/llama"]): `zinc bench` of the tree and llama.cpp's llama-bench
# side by side on whichever card comes (pp512 + tg128, tg128 @4096 and @16384); with S33_AB=1 instead decode-step A/B
# of clusters of 8 splits at depth 1,024 (8 of 64 cells) and 4,096 (8 of 128), against the tree's 16 combined splits.
export AB_TIMEOUT=60
. bench/calls/ab_env.sh
if [ -z "$S33_AB" ]; then
  zb bench -p 512 -n 128
  zb d4k -p 0 -n 128 -d 4096
  zb deep -p 0 -n 128 -d 16384
  LB=tmp/llama/llama-bench
  python3 -c "import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" $LB.xz $LB && chmod +x $LB
  export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda-13.0/targets/x86_64-linux/lib:$LD_LIBRARY_PATH
  LLB() { timeout 200 $LB -m .real/q8b.gguf -ngl 99 -fa 1 -o json "$@"; }
  LLB -r 5 -p 512 -n 128 > $OUT/r/llama.json 2> $OUT/r/llama.log
  LLB -r 3 -p 0 -n 128 -d 4096,16384 > $OUT/r/llama-deep.json 2> $OUT/r/llama-deep.log
  python3 - $OUT/r/llama.json $OUT/r/llama-deep.json <<'P'
import json, sys
for f in sys.argv[1:]:
    for r in json.load(open(f)):
        print("llama.cpp", r["gpu_info"], f"pp{r['n_prompt']} tg{r['n_gen']} d{r.get('n_depth', 0)}",
              round(r["avg_ts"], 1), "+-", round(r["stddev_ts"], 1), [round(x, 1) for x in r["samples_ts"]])
P
else
  ab --label d1k --depth 1024
  ab --label d1kcl8 --depth 1024 --set ATTN_CLUSTER=8 --set "ATTN_SPLITS=[(256,4,32,0),(2048,8,64),(8192,16,64),($L,16,64,3)]"
  ab --label d1k8 --depth 1024 --set "ATTN_SPLITS=[(256,4,32,0),(2048,8,64),(8192,16,64),($L,16,64,3)]"
  ab --label d4k --depth 4096
  ab --label d4kcl8 --depth 4096 --set ATTN_CLUSTER=8 --set "ATTN_SPLITS=[(256,4,32,0),(2048,16,64),(8192,8,128),($L,16,64,3)]"
  ab --label d4kcl8s --depth 4096 --set ATTN_CLUSTER=8 --set "ATTN_SPLITS=[(256,4,32,0),(2048,16,64),(8192,8,64),($L,16,64,3)]"
  ab --label d1kb --depth 1024
  rm -f $OUT/r/ab/*.npz
fi
