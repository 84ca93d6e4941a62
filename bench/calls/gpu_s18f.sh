# Session 18: does the slowdown of the 4th decode graph come from kernels with local memory in captured graphs?
# (Ran with the script of that time: its --lmem-nodes (CuPy kernels) and --attn-stages options were removed after; the
# CuPy "local memory" kernel had none: the compiler kept its array in registers.)
# CuPy graphs of 330 nodes, all / one / none of them using local memory; the decode attention at 2 stages (spills?).
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
for k in 330 1 0; do
  echo "== lmem nodes $k"; timeout 60 python3 bench/cuda_graph_count.py --graphs 10 --lmem-nodes $k --out $OUT/r/l$k 2>&1 | grep -v -i warn | grep -v "again" | tr '\n' ' ' | sed 's/torch graph/\n/g' | tr -s ' ' | head -14
  echo
done
wait
timeout 150 python3 bench/cuda_graph_count.py --graphs 0 --model .real/q8b.gguf --attn-stages 2 --out $OUT/r/m 2>&1 | grep -v -i warn | grep -v "^zinc" | tail -13
tar czf $OUT/s18f.tgz -C $OUT r && rm -rf $OUT/r
