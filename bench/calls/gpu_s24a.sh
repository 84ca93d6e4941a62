# Ran with bench/wip/attn-groups.patch applied (since reverted) and bench/cuda_attn_fused.py's forms extended with
# (cell groups, hi + lo operands) columns; that script crashed after its 128-cell rows (its loop variable g shadowed
# the generator), the tree A/B after it ran.
# Session 24 (first call): the decode attention's split loop as cell groups, a warp each (attention.py G: a batch of
# dots, each group its own online softmax, merged once after the loop: no cross-warp reductions or P exchange per
# block). GPU tests of the attention files; bench/cuda_attn_fused.py (the session-start kernel against groups 1/2/4/8,
# hi+lo or plain f16 operands, at 128-16512 cells); tg128 and tg128@16384 of the session-start tree (.ab/old/src)
# against this one (ATTN_GROUPS = 4), fresh processes.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_kernels.py tests/backends/test_cuda_rope.py tests/backends/test_kv_q8.py tests/backends/test_cuda_gptoss.py -k "attention or rope" 2>&1 | tail -3
timeout 170 python3 bench/cuda_attn_fused.py --old .ab/old/src/zinc/backends/cuda/kernels/attention.py --out $OUT/r 2>&1 | grep -v -i warn
wait
PYTHONPATH=$PWD/.ab/old/src timeout 110 python3 bench/cuda_tree_ab.py .real/q8b.gguf --label old1 --depth 16384 --out $OUT/r/ab 2>>$OUT/r/err.log
timeout 110 python3 bench/cuda_tree_ab.py .real/q8b.gguf --label new1 --depth 16384 --out $OUT/r/ab 2>>$OUT/r/err.log
python3 bench/cuda_tree_ab.py --compare $OUT/r/ab/tree-old1.npz $OUT/r/ab/tree-new1.npz
rm -f $OUT/r/ab/*.npz
tail -3 $OUT/r/err.log
