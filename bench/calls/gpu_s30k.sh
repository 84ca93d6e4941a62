# Session 30, call k: the unrolled split loop with the next step's tiles loaded before this step's products (a
# register double buffer), at depth: kernel rows at 16,512 and 4,224 cells (bench/cuda_attn_stream.py --rows), then
# decode-step A/B pairs at depth 4096 and 16384.
# Needs `git apply bench/wip/attn-unrolled-prefetch.patch` first (out of the backend: it never ran, session 30).
export AB_TIMEOUT=60
. bench/calls/ab_env.sh
timeout 80 python3 bench/cuda_attn_stream.py --cells 16512,4224 --out $OUT/r --rows "[(16,128,3,4),(16,64,3,4),(64,64,0,4),(32,64,0,4),(16,64,0,4)]" 2>&1 | grep -v Warn | grep -v "^S \|check"
ab --label d4k --depth 4096
ab --label d4k32u --depth 4096 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64),(8192,32,64,0),($L,16,128)]"
ab --label d16k --depth 16384
ab --label d16k64u --depth 16384 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64),(8192,16,64),($L,64,64,0)]"
rm -f $OUT/r/ab/*.npz
