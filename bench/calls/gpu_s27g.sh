# Session 27, call g: session 26's call e (`gpu_s26e.sh`: its split rows against the rows before at depth, the H100-tuned
# launch settings against their old values at tg128, `zinc bench` at depth 16384) and `zinc bench` pp512 + tg128, on
# an H200 only: on any other card it stops at once (call e already ran on an H100 this session).
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo "not an H200: stopped"; exit 0; }
bash bench/calls/gpu_s26e.sh
timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda -p 512 -n 128 -r 3 --json > $OUT/r/bench.json 2> $OUT/r/bench.log
python3 -c "import json; d=json.load(open('$OUT/r/bench.json')); print(d['device'], d['verify']['ok'], [(t['name'], round(t['tok_s'], 1)) for t in d['tests']])"
