# Session 7, call 10 (carry .gl, .snap): Qwen3.5-35B-A3B pp512 in fresh processes, interleaved: HEAD against the
# session-start code (ce1000b): the final bench gave 2,298 against 2,972-3,044 earlier.
. bench/gpu_env.sh
mkdir -p .real
[ -f .real/q35.gguf ] || python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q > /dev/null 2>&1
ab pp 2 "-m .real/q35.gguf --backend cuda -p 512 -n 0 -r 2" HEAD ce1000b
