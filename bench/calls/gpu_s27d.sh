# Session 27, call d: deeper software pipelines for the split kernel at 16,512 cells (call c: it waits on its loads,
# long-scoreboard and barrier stalls; 16 splits of 64 cells at 4 stages the fastest of its sweep), then the decode
# A/B at depth 16384 of the two best rows against the backend's.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
[ -f .real/q8b.gguf ] || python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1 &
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 200 python3 bench/cuda_attn_layout.py --sweep --out $OUT/r --cfgs "[(16,128,3,4),(16,64,4,4),(16,64,5,4),(16,64,6,4),(16,32,6,4),(16,32,8,4),(12,64,5,4),(16,128,2,4)]" 2>>$OUT/r/err.log | grep attention
wait
ab() { timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log | cut -c1-80; }
R="(256,4,32),(2048,8,64),(8192,16,64)"
ab --label base --depth 16384
ab --label s64x5 --depth 16384 --set "ATTN_SPLITS=[$R,(4611686018427387904,16,64,5)]"
ab --label s64x4 --depth 16384 --set "ATTN_SPLITS=[$R,(4611686018427387904,16,64,4)]"
ab --label base2 --depth 16384
rm -f $OUT/r/ab/*.npz
tail -3 $OUT/r/err.log
