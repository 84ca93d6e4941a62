# Session 34: the decode attention's first tile of cells loaded before its wait (ATTN_EARLY), the split launched
# early (ATTN_PDL's split wait 2) so that load overlaps the QKV projection. GPU tests of the rope + attention file,
# then decode-step A/B pairs at depth 0 and 4096.
export AB_TIMEOUT=60
. bench/calls/ab_env.sh
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_rope.py -k "attention" 2>&1 | tail -3
E="--set ATTN_EARLY=True"
L2="--set ATTN_PDL=((2,0),(0,1))"
ab --label base
ab --label early $E
ab --label earlyL $E $L2
ab --label launch $L2
ab --label base2
ab --label earlyL2 $E $L2
ab --label d4096 --depth 4096
ab --label d4096eL --depth 4096 $E $L2
rm -f $OUT/r/ab/*.npz
