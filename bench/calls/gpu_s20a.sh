# Session 20 (first call): the PDL A/B. bench/cuda_pdl_ab.py and oldsrc/ (a copy of HEAD's src) were removed afterwards (PDL dropped).
# Session 20: programmatic dependent launch of the decode matvecs (mmvs waits after its first step's weight loads;
# the quantize and combine kernels trigger at their start): correctness, then tg128 A/B in fresh processes against
# the same tree with PDL off and the session-start tree (oldsrc/, a copy of HEAD's src).
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_graph.py tests/backends/test_cuda_mmvq.py 2>&1 | tail -2
wait
for i in 1 2; do
  PYTHONPATH=$PWD/oldsrc/src timeout 120 python3 bench/cuda_pdl_ab.py .real/q8b.gguf --pdl 0 --label old$i --out $OUT/r 2>>$OUT/r/err.log
  timeout 120 python3 bench/cuda_pdl_ab.py .real/q8b.gguf --pdl 0 --label off$i --out $OUT/r 2>>$OUT/r/err.log
  timeout 120 python3 bench/cuda_pdl_ab.py .real/q8b.gguf --pdl 1 --label on$i --out $OUT/r 2>>$OUT/r/err.log
done
timeout 120 python3 bench/cuda_engine_reuse.py .real/q8b.gguf --requests 3 --tokens 200 --out $OUT/r/e 2>&1 | grep -v -i warn | tail -6
tail -5 $OUT/r/err.log
tar czf $OUT/s20a.tgz -C $OUT r && rm -rf $OUT/r
