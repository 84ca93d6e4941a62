# Session 9, call 1: the rows-as-streams matvec (V 2, kernels/mmvs.py): the mmvq tests on the GPU, then the sweep
# of VAR2 against each shape's current configuration on every Qwen3-8B decode shape; the model is written meanwhile.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real
[ -f .real/q8b.gguf ] || (python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &)
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_mmvq.py 2>&1 | tail -2
timeout 400 python3 bench/cuda_mmvq_sweep.py --out $OUT --variants v2 > $OUT/sweep.log 2>&1
grep -v "^ *$" $OUT/sweep.log | tail -16
