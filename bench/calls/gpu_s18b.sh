# Session 18: is the decode's slowdown after a prompt the capture of a prompt chunk (bench/cuda_tg_capture.py)?
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1
(python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q >> $OUT/r/synth.log 2>&1) &
for mode in seq first lmemmax; do
  timeout 120 python3 bench/cuda_tg_capture.py .real/q8b.gguf --mode $mode --out $OUT/r/q8b 2>&1 | grep -v -i warn | grep -v "return \[o" | tail -6
done
timeout 120 python3 bench/cuda_tg_capture.py .real/q8b.gguf --mode stack --stack 8192 --out $OUT/r/q8b 2>&1 | grep -v -i warn | tail -5
while pgrep -f zinc.synth > /dev/null; do sleep 2; done
timeout 150 python3 bench/cuda_tg_capture.py .real/q35.gguf --mode seq --out $OUT/r/q35 2>&1 | grep -v -i warn | tail -6
tar czf $OUT/s18b.tgz -C $OUT r && rm -rf $OUT/r
