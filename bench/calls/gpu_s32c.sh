# Session 32, call c (prepared, not run: no device time in session 32): the decode attention's splits as one
# thread-block cluster that merges them in place (`ops.ATTN_CLUSTER`, `kattn.decode_attention(cluster=True)`: no
# combine launch, 36 launches fewer a tg128 step). First its GPU tests (the cluster launch and barrier only run on a
# GPU; the interpreter checks the merge itself), then decode-step A/B pairs at tg128 (4 splits of 32 cells; with the
# split's trigger at its end or after its loop, letting the output projection start during the merge; with 8 splits of 16); then every family's tiny model at Q8_0 with it on.
# Depth rows: gpu_s32d.sh.
export AB_TIMEOUT=60
. bench/calls/ab_env.sh
timeout 240 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_kernels.py \
  -k "cluster or q8_output or decode_attention_kernel" 2>&1 | tail -4
ab --label t0
ab --label tcl --set ATTN_CLUSTER=True
ab --label tclt2 --set ATTN_CLUSTER=True --set "ATTN_PDL=((0,2),(0,1))"
ab --label tclt3 --set ATTN_CLUSTER=True --set "ATTN_PDL=((0,3),(0,1))"
ab --label tcl8x16 --set ATTN_CLUSTER=True --set "ATTN_SPLITS=[(256,8,16,0),(2048,16,64),(8192,16,64),($L,16,64,3)]"
ab --label t0b
timeout 150 python3 -c "
import zinc.backends.cuda.ops as o; o.ATTN_CLUSTER = True
from zinc.backends.cuda.check_families import main; main(['--out', '$OUT/r/cf', '--families', 'qwen3-tiny,qwen35-tiny,gpt-oss-tiny,gemma4-tiny', '--ftypes', 'Q8_0'])
" 2>&1 | tail -6
rm -f $OUT/r/ab/*.npz
