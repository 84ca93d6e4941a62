# Session 24 (fourth call): tg128 on a 128-cell cache with the decode attention in one split of 128 cells a step
# (the split programs write the output: no combine launch, one trip) against the tree's 2 splits of 64, and with 2
# pipeline stages or 8 warps; fresh processes (bench/cuda_tree_ab.py --set ATTN_SPLITS=...).
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
T='(2048,8,64),(8192,16,128),(4611686018427387904,32,64)]'
ab() { timeout 90 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log; }
ab --label head1
ab --label one128 --set "ATTN_SPLITS=[(256,1,128),$T"
ab --label one128st2 --set "ATTN_SPLITS=[(256,1,128,2),$T"
ab --label one128w8 --set "ATTN_SPLITS=[(256,1,128,3,8),$T"
ab --label head2
ab --label one128b --set "ATTN_SPLITS=[(256,1,128),$T"
python3 bench/cuda_tree_ab.py --compare $OUT/r/ab/tree-head1.npz $OUT/r/ab/tree-one128.npz
rm -f $OUT/r/ab/*.npz
tail -2 $OUT/r/err.log
