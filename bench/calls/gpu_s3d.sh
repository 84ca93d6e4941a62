# Session 3, call D: the real Gemma 3 270M greedy check (its four parts carried over four calls into /tmp/g).
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
cp .real/part* /tmp/g/ 2>/dev/null; cat /tmp/g/part0 /tmp/g/part1 /tmp/g/part2 /tmp/g/part3 > /tmp/g/gemma.gguf; md5sum /tmp/g/gemma.gguf
timeout 300 python3 -m zinc.backends.cuda.check_real /tmp/g/gemma.gguf -n 64 --out $OUT 2>&1 | tail -12
