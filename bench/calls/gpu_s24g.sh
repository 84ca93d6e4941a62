# Session 24 (seventh call): is the PDL decode exact? tg128 A/B (logits of 8 teacher-forced steps, greedy tokens)
# of the session-start tree against this one with PDL on twice (run-to-run), and with PDL on for the quantize and
# matvec kernels only (PDL_ATTENTION=False).
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1
ab() { timeout 80 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log; }
PYTHONPATH=$PWD/.ab/old/src ab --label old1
ab --label pdl1
ab --label pdl2
ab --label noattn --set PDL_ATTENTION=False
for x in pdl1 noattn; do echo "== old1 vs $x"; python3 bench/cuda_tree_ab.py --compare $OUT/r/ab/tree-old1.npz $OUT/r/ab/tree-$x.npz; done
echo "== pdl1 vs pdl2"; python3 bench/cuda_tree_ab.py --compare $OUT/r/ab/tree-pdl1.npz $OUT/r/ab/tree-pdl2.npz
rm -f $OUT/r/ab/*.npz
tail -3 $OUT/r/err.log
