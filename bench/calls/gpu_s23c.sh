# Session 23 (third call, short: 425 s of device time left): (1) the matvec's scale bytes to floats by a logic op and
# an add (exact; mmvs._u8f, _sc) instead of I2F; (2) the residual add + RMS norm inside the Q4_K matvec before them
# with tiles Triton lays out as mmvs's (mmvq.resnorm_flat_kernel: warps over rows, lanes over units). The producer
# checked and timed in chains (bench/cuda_resnorm.py --quick); tg128 of HEAD (.ab/old/src), this tree with RESNORM
# off (the I2F change alone) and on, fresh processes.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p $OUT/r .real
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 100 python3 bench/cuda_resnorm.py --quick --out $OUT/r 2>&1 | grep -v '"check"' | cut -c1-400
wait
ab() { timeout 70 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log; }
ab --label on1
ab --label off1 --set RESNORM=False
PYTHONPATH=$PWD/.ab/old/src ab --label old1
python3 bench/cuda_tree_ab.py --compare $OUT/r/ab/tree-old1.npz $OUT/r/ab/tree-on1.npz
rm -f $OUT/r/ab/*.npz
tail -2 $OUT/r/err.log
