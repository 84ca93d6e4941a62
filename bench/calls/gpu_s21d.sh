# Session 21, the last of five calls: the real Gemma 3 270M (Q4_K_M, 253 MB, the embedded default model) carried in
# five ~50 MB pieces (.g/c0-c4, each call copying its piece to /tmp/g), joined here; then the greedy check against
# the NumPy backend (64 tokens, 5 prompts; default numerics and exact=True).
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p /tmp/g && cp .g/c4/p04 /tmp/g/ && cat /tmp/g/p00 /tmp/g/p01 /tmp/g/p02 /tmp/g/p03 /tmp/g/p04 > /tmp/g/gemma.gguf
md5sum /tmp/g/gemma.gguf; cat .g/c4/md5
timeout 400 python3 -m zinc.backends.cuda.check_real /tmp/g/gemma.gguf -n 64 --out $OUT 2>&1 | grep -v -i warn | tail -14
