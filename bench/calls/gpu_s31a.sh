# Session 31, call a: the unrolled split loop with the next step's tiles loaded before this step's products
# (bench/wip/attn-unrolled-prefetch.patch applied): the GPU tests of both attention files, kernel rows at 16,512 and
# 4,224 cells, then decode-step A/B pairs at depth 4096 and 16384 (the tree's rows against unrolled ones).
export AB_TIMEOUT=60
. bench/calls/ab_env.sh
timeout 150 python3 -m pytest -q -x -p no:cacheprovider tests/backends/test_cuda_kernels.py -k decode_attention 2>&1 | tail -1
timeout 100 python3 -m pytest -q -x -p no:cacheprovider tests/backends/test_cuda_rope.py -k rope_qk_attention 2>&1 | tail -1
timeout 90 python3 bench/cuda_attn_stream.py --cells 16512,4224 --out $OUT/r --rows "[(16,128,3,4),(64,64,0,4),(32,64,0,4),(16,64,3,4),(32,32,0,4),(16,64,0,4)]" 2>&1 | grep -v Warn | grep -v "^S \|check"
ab --label d4k --depth 4096
ab --label d4k32u --depth 4096 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64),(8192,32,64,0),($L,16,128)]"
ab --label d16k --depth 16384
ab --label d16k64u --depth 16384 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64),(8192,16,64),($L,64,64,0)]"
rm -f $OUT/r/ab/*.npz
