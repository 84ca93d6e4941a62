# Session 10, call 1: where the decode step's time goes now: Qwen3-8B Q4_K_M at depth 0 and 16384, Qwen3.5-35B-A3B
# Q4_K_M at depth 0 (per-kernel step profiles); the models are written first (Qwen3.5 in the background).
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real
[ -f .real/q35.gguf ] || (python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > /dev/null 2>&1 &)
[ -f .real/q8b.gguf ] || python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1
for d in 0 16384; do
  timeout 90 python3 bench/cuda_step_profile.py .real/q8b.gguf --depth $d --out $OUT 2>&1 | grep -v Warn | sed -n 1,12p
done
while [ ! -f .real/q35.gguf ] || pgrep -f zinc.synth > /dev/null; do sleep 2; done
mkdir -p $OUT/q35
timeout 120 python3 bench/cuda_step_profile.py .real/q35.gguf --out $OUT/q35 2>&1 | grep -v Warn | sed -n 1,28p
