# Prepared in session 33 for the next device time: the GLU matvec writing its output on 8 bits for the down
# projection through thread-block clusters (`ops.GLU_Q8`, off: the programs of each 32 outputs as one cluster of 16
# at Qwen3-8B's 2 rows a program, the last quantizing them after the cluster barrier; 36 quantize launches fewer a
# tg128 step). Session 33's grid-wide counter form of it lost (H100 replay 2,190 -> 2,274 µs). Its GPU tests (the
# cluster launch and barrier only run on a GPU), decode-step A/B pairs, then the families at Q4_K_M and Q6_K with it.
export AB_TIMEOUT=45
. bench/calls/ab_env.sh
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_mmvq.py tests/backends/test_cuda_kernels.py \
  -k "q8_output or pdl or glu or streams or cluster" 2>&1 | tail -3
ab --label g0
ab --label gq8 --set GLU_Q8=True
ab --label g0b
ab --label gq8b --set GLU_Q8=True
rm -f $OUT/r/ab/*.npz
timeout 120 python3 -c "
import zinc.backends.cuda.ops as o; o.GLU_Q8 = True
from zinc.backends.cuda.check_families import main; main(['--out', '$OUT/r/cf', '--ftypes', 'Q4_K_M,Q6_K'])
" 2>&1 | tail -4
