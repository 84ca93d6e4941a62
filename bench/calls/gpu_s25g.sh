# Session 25, last call: the decode attention's configuration for short caches under the new launch chain (A/B,
# fresh processes), and gemma4moe-tiny's rows of check_families with the routing near-tie rule (ROUTE_TIE).
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1 &
timeout 100 python3 -m zinc.backends.cuda.check_families --out $OUT/r --families gemma4moe-tiny > $OUT/r/families.log 2>&1; tail -12 $OUT/r/families.log
wait
ab() { timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log | cut -c1-55; }
T="(2048,8,64),(8192,16,128),(4611686018427387904,32,64)]"
ab --label base1
ab --label sp4b32 --set "ATTN_SPLITS=[(256,4,32),$T"
ab --label w2 --set "ATTN_SPLITS=[(256,2,64,3,2),$T"
ab --label w8 --set "ATTN_SPLITS=[(256,2,64,3,8),$T"
ab --label st2 --set "ATTN_SPLITS=[(256,2,64,2),$T"
ab --label base2
rm -f $OUT/r/ab/*.npz; tar czf $OUT/r/ab.tgz -C $OUT/r ab; rm -rf $OUT/r/ab
