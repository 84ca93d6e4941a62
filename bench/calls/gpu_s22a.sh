# Ran the first form of the one-token attention (new key and value from registers, FINAL one split), since replaced.
# Session 22 (first call): the decode attention's one-token path (new key and value from registers, no barrier;
# one split writes the output itself) and the norm's weight loads before its sum. GPU tests of the attention and
# rope files; bench/cuda_attn_fused.py (old kernel vs new at 1-64 splits, 128-16512 cells); tg128 (and @16384) of
# the session-start tree (.ab/old/src, carried) against this one at its splits and with one split under 256 cells.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_kernels.py tests/backends/test_cuda_rope.py tests/backends/test_kv_q8.py -k "attention or rope or quantize or norm" 2>&1 | tail -2
timeout 170 python3 bench/cuda_attn_fused.py --old .ab/old/src/zinc/backends/cuda/kernels/attention.py --out $OUT/r 2>&1 | grep -v -i warn
wait
F='ATTN_SPLITS=[(256,1,64),(2048,8,64),(8192,16,128),(4611686018427387904,32,64)]'
PYTHONPATH=$PWD/.ab/old/src timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --label old1 --depth 16384 --out $OUT/r/ab 2>>$OUT/r/err.log
timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --label new1 --depth 16384 --out $OUT/r/ab 2>>$OUT/r/err.log
timeout 80 python3 bench/cuda_tree_ab.py .real/q8b.gguf --label final1 --set "$F" --out $OUT/r/ab 2>>$OUT/r/err.log
PYTHONPATH=$PWD/.ab/old/src timeout 80 python3 bench/cuda_tree_ab.py .real/q8b.gguf --label old2 --out $OUT/r/ab 2>>$OUT/r/err.log
timeout 80 python3 bench/cuda_tree_ab.py .real/q8b.gguf --label final2 --set "$F" --out $OUT/r/ab 2>>$OUT/r/err.log
python3 bench/cuda_tree_ab.py --compare $OUT/r/ab/tree-old1.npz $OUT/r/ab/tree-final1.npz
rm -f $OUT/r/ab/*.npz
tail -3 $OUT/r/err.log
tar czf $OUT/s22a.tgz -C $OUT r && rm -rf $OUT/r
