# Session 36, call c: the next attention layer's cells asked into the L2 by the matvecs before it (ops.KV_PREFETCH:
# site -> cells of each of its 16 splits; 1,024 cells a split at depth 16384), at depth 16384 against the tree, then
# the GPU tests of the prefetch (bit-equal matvecs); on an H200 zinc bench of the tree too. Ran on an H100: every
# form slower (bench/RESULTS.md, session 36); the code left the backend as bench/wip/kv-l2-prefetch.patch, which
# this script applies to the device's copy of the tree first.
patch -p1 --forward -s < bench/wip/kv-l2-prefetch.patch || exit 1
export AB_TIMEOUT=${AB_TIMEOUT:-150}
. bench/calls/ab_env.sh
date
python3 -m pytest -q tests/backends/test_cuda_mmvq.py -k prefetch 2>&1 | tail -2
ab --label t16k --depth 16384
ab --label down256e --depth 16384 --set "KV_PREFETCH={'down':256}"
ab --label qkv256e --depth 16384 --set "KV_PREFETCH={'qkv':256}"
date
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  zb s36_h200 -p 512 -n 128
  zb s36_h200_d16384 -n 128 -d 16384
fi
ab --label glu256e --depth 16384 --set "KV_PREFETCH={'glu':256}"
ab --label down256p --depth 16384 --set "KV_PREFETCH={'down':256}" --set KV_PREFETCH_POLICY=1
ab --label t16k2 --depth 16384
date
