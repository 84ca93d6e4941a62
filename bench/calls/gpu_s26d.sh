# Session 26, call d: with one f16 operand each in the decode attention (fewer registers: 121 against 153 at head
# dim 128), its split configurations again (`ops.ATTN_SPLITS`, A/B in fresh processes on one machine): caches of
# 16,512 cells (the last row), of 4,224 (the 2,048-8,192 row) and of 128 (the first row).
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
[ -f .real/q8b.gguf ] || python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
ab() { timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log | cut -c1-90; }
R="ATTN_SPLITS=[(256,4,32),(2048,8,64)"
B="$R,(8192,16,128),"
ab --label d1 --depth 16384
ab --label d32b128st2 --depth 16384 --set "${B}(4611686018427387904,32,128,2)]"
ab --label d16b128 --depth 16384 --set "${B}(4611686018427387904,16,128)]"
ab --label d24b64 --depth 16384 --set "${B}(4611686018427387904,24,64)]"
ab --label d32b64st4 --depth 16384 --set "${B}(4611686018427387904,32,64,4)]"
ab --label d32b128w8 --depth 16384 --set "${B}(4611686018427387904,32,128,3,8)]"
ab --label d2 --depth 16384
T=",(4611686018427387904,32,64)]"
ab --label m1 --depth 4096
ab --label m16b64 --depth 4096 --set "$R,(8192,16,64)$T"
ab --label m32b64 --depth 4096 --set "$R,(8192,32,64)$T"
ab --label m16b128st2 --depth 4096 --set "$R,(8192,16,128,2)$T"
ab --label m8b128 --depth 4096 --set "$R,(8192,8,128)$T"
ab --label m2 --depth 4096
rm -f $OUT/r/ab/*.npz
