# Session 32, call a (prepared; session 32 had no device time: 229 s of the try's 30 minutes were left, too few to
# start a machine): `zinc bench` of the tree on whichever card comes (pp512 + tg128, tg128@d4096, tg128@d16384: the
# first H200 numbers since session 26 if an H200 comes); on an H200 also the deep row of 16 splits of 64 cells
# (session 31's, chosen on an H100) against session 26's 16 of 128. Then one decode-step question left open by session
# 31: one unsplit program a KV head at 128 cells (no combine launch) lost 19 tok/s in the step though its kernel alone
# was faster; here with the split letting the output projection launch at its start (ATTN_PDL's first pair), as the
# combine does when there is one.
export AB_TIMEOUT=60
. bench/calls/ab_env.sh
zb bench -p 512 -n 128
zb d4k -p 0 -n 128 -d 4096
zb deep -p 0 -n 128 -d 16384
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  ab --label d16k --depth 16384
  ab --label d16k128 --depth 16384 --set "ATTN_SPLITS=[(256,4,32,0),(2048,16,64),(8192,16,64),($L,16,128)]"
fi
ab --label t0
ab --label t1w8 --set "ATTN_SPLITS=[(256,1,64,0,8),(2048,16,64),(8192,16,64),($L,16,64,3)]"
ab --label t1w8trig --set "ATTN_SPLITS=[(256,1,64,0,8),(2048,16,64),(8192,16,64),($L,16,64,3)]" --set "ATTN_PDL=((0,1),(0,1))"
ab --label t0b
rm -f $OUT/r/ab/*.npz
