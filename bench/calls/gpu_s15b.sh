# Session 15, call 2: the record runs of the final code. Qwen3-8B Q4_K_M: pp512, pp2048, tg128 at depth 0, tg128
# at depth 4096 and 16384, a depth-0 step profile; Qwen3.5-35B-A3B Q4_K_M: pp512, pp2048, tg128, a 512-token
# prefill profile. Everything lands in one archive ($OUT/s15b.tgz: the call's file count is limited).
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q; python3 -m zinc.synth qwen35-35b-a3b -o .real/q35.gguf --ftype Q4_K_M -q) > $OUT/r/synth.log 2>&1 &
res() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], [(t['name'], t['depth'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $1 || tail -3 ${1%.json}.log; }
b() { n=$1; shift; timeout 240 python3 -m zinc.cli bench --backend cuda --json "$@" > $OUT/r/$n.json 2> $OUT/r/$n.log; res $OUT/r/$n.json; }
while [ ! -f .real/q8b.gguf ] || pgrep -f "synth qwen3-8b" > /dev/null; do sleep 2; done
b q8b-d0 -m .real/q8b.gguf -p 512,2048 -n 128 -r 3
b q8b-deep -m .real/q8b.gguf -p 0 -n 128 -d 4096,16384 -r 3
timeout 90 python3 bench/cuda_step_profile.py .real/q8b.gguf --out $OUT/r 2>&1 | grep -v Warn | sed -n 1,8p
while pgrep -f zinc.synth > /dev/null; do sleep 2; done; tail -2 $OUT/r/synth.log
b q35 -m .real/q35.gguf -p 512,2048 -n 128 -r 3
timeout 120 python3 bench/cuda_prefill_profile.py .real/q35.gguf --tokens 512 --out $OUT/r 2>&1 | grep -v Warn | tail -12
ls $OUT/r; tar czf $OUT/s15b.tgz -C $OUT r && rm -rf $OUT/r
