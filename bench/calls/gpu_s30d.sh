# Session 30, call d: the split loop unrolled at a full cache's trip count (ATTN_SPLITS rows with stages 0: no
# cp.async pipeline, each step's tiles loaded straight into registers; more splits) against the backend's rows, in
# the decode step (bench/cuda_tree_ab.py, fresh processes): tg128 on a 128-cell cache and tg128 at depth 4096 and
# 16384; logits compared; then the GPU tests of the two attention files.
export AB_COLS=120
. bench/calls/ab_env.sh
ab --label base4k --depth 4096
ab --label u8x16 --depth 4096 --set "ATTN_SPLITS=[(256,8,16,0),(2048,8,64),(8192,33,64,0),($L,16,128)]"
ab --label u4x32 --depth 4096 --set "ATTN_SPLITS=[(256,4,32,0),(2048,8,64),(8192,32,64,0),($L,16,128)]"
python3 bench/cuda_tree_ab.py --compare $OUT/r/ab/tree-base4k.npz $OUT/r/ab/tree-u8x16.npz 2>&1 | tail -3
ab --label base16k --depth 16384
ab --label u64x64 --depth 16384 --set "ATTN_SPLITS=[(256,8,16,0),(2048,8,64),(8192,33,64,0),($L,64,64,0)]"
ab --label u32x128 --depth 16384 --set "ATTN_SPLITS=[(256,8,16,0),(2048,8,64),(8192,33,64,0),($L,32,128,0)]"
rm -f $OUT/r/ab/*.npz
timeout 150 python3 -m pytest -q -x -p no:cacheprovider tests/backends/test_cuda_kernels.py -k decode_attention 2>&1 | tail -2
timeout 100 python3 -m pytest -q -x -p no:cacheprovider tests/backends/test_cuda_rope.py -k rope_qk_attention 2>&1 | tail -2
tail -5 $OUT/r/err.log
