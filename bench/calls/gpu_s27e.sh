# Session 27, call e: the decode attention's split programs asking the L2 for their first cells' K and V rows before
# the rope and KV write (`ops.ATTN_PREFETCH`): the split kernel's GPU tests (every case with the prefetch), then tg128
# and tg128@16384 A/B in fresh processes against the default. Ran in session 27 on an H100 with that code in the
# tree (now bench/wip/attn-l2-prefetch.patch, on top of kv-head-major.patch): slower, not kept.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
[ -f .real/q8b.gguf ] || python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1 &
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_kernels.py -k "decode_attention_kernel" 2>&1 | tail -2
wait
ab() { timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log | cut -c1-80; }
for i in 1 2; do
ab --label base$i
ab --label pf$i --set ATTN_PREFETCH=True
done
ab --label dpf --depth 16384 --set ATTN_PREFETCH=True
ab --label dbase --depth 16384
rm -f $OUT/r/ab/*.npz
tail -3 $OUT/r/err.log
