# Session 18: which event leaves the decode's graph launches slower (bench/cuda_tg_capture.py), and does the
# context's LMEM_RESIZE_TO_MAX flag keep zinc bench's sequence fast?
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1
(python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q >> $OUT/r/synth.log 2>&1) &
run() { echo "== $*"; timeout 120 python3 bench/cuda_tg_capture.py "$@" --out $OUT/r/$(basename $1 .gguf) 2>&1 | grep -v -i warn | grep -v "return \[o" | grep -v "^zinc" | tail -14; }
run .real/q8b.gguf --pre none free1g empty drop limit
run .real/q8b.gguf --pre lmemmax drop empty prompt2 limit
run .real/q8b.gguf --pre lmemmax empty drop
run .real/q8b.gguf --pre lmemmax bench
run .real/q8b.gguf --pre none bench
while pgrep -f zinc.synth > /dev/null; do sleep 2; done
run .real/q35.gguf --pre lmemmax bench
tar czf $OUT/s18c.tgz -C $OUT r && rm -rf $OUT/r
