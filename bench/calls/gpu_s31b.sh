# Session 31, call b: kernel rows of the deep split loop (cells a step, stages, warps) at 16,512 and 4,224 cells,
# and one unsplit program a KV head at 128 cells (no combine launch; 8 or 16 warps); then decode-step A/B pairs:
# tg128 with one split against the tree's 8 of 16, and depth 16384 with 16 splits of 64 cells.
export AB_TIMEOUT=60
. bench/calls/ab_env.sh
timeout 100 python3 bench/cuda_attn_stream.py --cells 16512,4224 --out $OUT/r --rows "[(16,128,3,4),(16,64,3,4),(16,64,4,4),(16,64,5,4),(16,64,4,8),(16,32,6,4),(16,128,2,4),(24,64,4,4)]" 2>&1 | grep -v Warn | grep -v "^S \|check"
timeout 60 python3 bench/cuda_attn_stream.py --cells 128 --out $OUT/r1 --rows "[(8,16,0,4),(1,64,0,8),(1,32,0,8),(1,128,0,8),(1,128,0,16),(1,64,0,4),(2,64,0,8)]" 2>&1 | grep -v Warn | grep -v "^S \|check"
ab --label t0
ab --label t1x64w8 --set "ATTN_SPLITS=[(256,1,64,0,8),(2048,16,64),(8192,16,64),($L,16,128)]"
ab --label t1x128w16 --set "ATTN_SPLITS=[(256,1,128,0,16),(2048,16,64),(8192,16,64),($L,16,128)]"
ab --label d16k --depth 16384
ab --label d16k64s3 --depth 16384 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64),(8192,16,64),($L,16,64,3)]"
ab --label d16k64s4 --depth 16384 --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64),(8192,16,64),($L,16,64,4)]"
rm -f $OUT/r/ab/*.npz
