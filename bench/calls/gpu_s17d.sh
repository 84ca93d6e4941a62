# Session 17: the Q8_0 decode matvec on f32 activations (matvec_generic.q8_matvec): its configurations against
# mmvq (bench/cuda_q8f_bench.py), GPU tests, every family at Q8_0, then Qwen3-8B Q8_0 decode with the picked
# configuration against HEAD (oldsrc/, untracked: the 8-bit-activation path).
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p .real $OUT/r
(python3 -m zinc.synth qwen3-8b -o .real/q8b-q8.gguf --ftype Q8_0 -q > $OUT/r/synth.log 2>&1) &
timeout 200 python3 bench/cuda_q8f_bench.py --out $OUT/r 2>&1 | grep -v -i warn | tail -22 | tee $OUT/r/q8f.txt
pick=$(grep '^PICK' $OUT/r/q8f.txt | cut -d' ' -f2)
[ -n "$pick" ] && sed -i "s/^Q8F_CONFIG = ([0-9, ]*)/Q8F_CONFIG = ($pick)/" src/zinc/backends/cuda/kernels/matvec_generic.py
grep -n "^Q8F_CONFIG" src/zinc/backends/cuda/kernels/matvec_generic.py
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_kernels.py tests/backends/test_cuda_mmvq.py -rf --tb=short 2>&1 | tail -4
timeout 60 python3 -m zinc.backends.cuda.check_families --out $OUT/r --ftypes Q8_0 2>&1 | grep -v Warn | tail -12
pp() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], d['verify'].get('ok'), [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $1; }
while pgrep -f zinc.synth > /dev/null; do sleep 2; done
timeout 80 python3 -m zinc.cli bench -m .real/q8b-q8.gguf --backend cuda -p 512 -n 128 -r 3 --json > $OUT/r/q8b-q8.json 2> $OUT/r/q8b-q8.log; pp $OUT/r/q8b-q8.json
PYTHONPATH=$PWD/oldsrc/src timeout 80 python3 -m zinc.cli bench -m .real/q8b-q8.gguf --backend cuda -p 512 -n 128 -r 3 --json > $OUT/r/q8b-q8-old.json 2> $OUT/r/q8b-q8-old.log; pp $OUT/r/q8b-q8-old.json
tar czf $OUT/s17d.tgz -C $OUT r && rm -rf $OUT/r
