# Session 24 (ninth call): the final code (PDL for the quantize and streams-matvec launches, the attention's plain):
# the GPU test of the PDL launches, then tg128 and tg128@16384 of this tree (the session-start tree's in gpu_s24f/g).
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_mmvq.py -k pdl 2>&1 | tail -2
wait
timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab --label final1 --depth 16384 2>>$OUT/r/err.log
rm -f $OUT/r/ab/*.npz
# The session-start tree's run on the same machine followed as its own command:
#   PYTHONPATH=$PWD/.ab/old/src python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab --label old2 --depth 16384
