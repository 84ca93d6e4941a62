# Session 37, call c (ran on an H100: triggers 4 and 5 no faster, taken out of the kernel; 8 warps slower): the GPU test of the attention's PDL launches; at depth the split's trigger at the
# start of its last step or two (ATTN_PDL (0, 4) / (0, 5): the combine and the output projection stand ready one or
# two tiles earlier) against the tree's (0, 3), and 16 splits of 128 cells at 8 warps (offline: no spill, where 4
# warps spill; never measured on an H100).
export AB_TIMEOUT=${AB_TIMEOUT:-150} AB_COLS=${AB_COLS:-170}
. bench/calls/ab_env.sh
date
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_kernels.py -k "pdl or q8_output" 2>&1 | tail -2
S() { echo "ATTN_SPLITS=[(256,4,32,0),(2048,16,64),(8192,16,64),($L,$1)]"; }
ab --label t16k --depth 16384
ab --label trig4 --depth 16384 --set "ATTN_PDL=((0,4),(1,1))"
ab --label trig5 --depth 16384 --set "ATTN_PDL=((0,5),(1,1))"
ab --label w8x128 --depth 16384 --set "$(S 16,128,3,8)"
ab --label t16k2 --depth 16384
ab --label trig4b --depth 16384 --set "ATTN_PDL=((0,4),(1,1))"
ab --label trig5b --depth 16384 --set "ATTN_PDL=((0,5),(1,1))"
date
ab --label t4k --depth 4096
ab --label trig4_4k --depth 4096 --set "ATTN_PDL=((0,4),(1,1))"
ab --label trig5_4k --depth 4096 --set "ATTN_PDL=((0,5),(1,1))"
date
