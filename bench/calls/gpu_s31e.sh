# Session 31, call e: the unrolled split loop of one token's rope program loads its first step's tiles before the
# rope part (`attn_split_kernel` PRE): GPU tests of both attention files, then decode-step A/B pairs against the
# commit before it (carried in tmp/base/src) at tg128, and at depth 1024 with the 256-2,047 row unrolled.
export AB_TIMEOUT=60
. bench/calls/ab_env.sh
timeout 150 python3 -m pytest -q -x -p no:cacheprovider tests/backends/test_cuda_rope.py -k rope_qk_attention 2>&1 | tail -1
timeout 100 python3 -m pytest -q -x -p no:cacheprovider tests/backends/test_cuda_kernels.py -k decode_attention 2>&1 | tail -1
base() { PYTHONPATH=$PWD/tmp/base/src ab "$@"; }
base --label base1
ab --label pre1
base --label base2
ab --label pre2
base --label d1kbase --depth 1024
ab --label d1kpre --depth 1024
ab --label d1kpreU --depth 1024 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64,0),(8192,16,64),($L,16,64,3)]"
rm -f $OUT/r/ab/*.npz
