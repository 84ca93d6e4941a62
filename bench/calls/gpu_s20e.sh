# Session 20: Q6_K streams unrolled twice capped at 128 registers (one wave for the 4096x12288 down projection):
# the kernel alone with and without the cap, the decode against HEAD (oldsrc/, a copy), then per-kernel step
# profiles at depths 0 and 16384 and zinc bench of the tree that runs.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
pp() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], d['verify'].get('ok'), [(t['name'], round(t['tok_s'],1), round(t['tok_s_sd'],1)) for t in d['tests']])" $1 || tail -3 ${1%.json}.log; }
(python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1) &
python3 - <<'PY' 2>&1 | grep -v -i warn
import numpy as np, torch, triton
from zinc.backends.base import QTensor
from zinc.backends.cuda.kernels import mmvq, mmvs
from zinc.backends.cuda.weights import CudaWeight
from zinc.gguf.constants import GGMLType
from zinc.gguf.quants import random_blocks
dev = torch.device("cuda")
rng = np.random.default_rng(1)
q = QTensor("w", GGMLType.Q6_K, (4096, 12288), random_blocks(GGMLType.Q6_K, 4096 * 12288, rng, scale=0.05))
ws = [CudaWeight(q, dev) for _ in range(8)]
x = torch.randn((1, 12288), device=dev); xqt = mmvq.quantize_x(x); y = torch.empty((1, 4096), device=dev)
cap = mmvs._reg_cap
for label, f in (("capped", cap), ("uncapped", lambda *a: {}), ("capped", cap), ("uncapped", lambda *a: {})):
    mmvs._reg_cap = f
    it = iter(range(1 << 30))
    def call():
        mmvq.matvec(xqt, ws[next(it) % 8].parts, 14, 4096, 12288, y)
    call(); torch.cuda.synchronize(); ref = y.clone() if label == "capped" else ref
    with torch.cuda.stream(torch.cuda.Stream()):
        us = triton.testing.do_bench_cudagraph(call, rep=50, return_mode="median") * 1e3
    print(f"Q6_K 4096x12288 {label:9} {us:6.2f} us  max |y - capped| {float((y - ref).abs().max()):.2e}")
mmvs._reg_cap = cap
PY
wait
for i in 1 2; do
  PYTHONPATH=$PWD/oldsrc/src timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --label head$i --out $OUT/r/ab 2>>$OUT/r/err.log
  timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --label cap$i --out $OUT/r/ab 2>>$OUT/r/err.log
done
rm -f $OUT/r/ab/*.npz
timeout 100 python3 bench/cuda_step_profile.py .real/q8b.gguf --out $OUT/r 2>>$OUT/r/err.log | head -8
timeout 150 python3 bench/cuda_step_profile.py .real/q8b.gguf --depth 16384 --out $OUT/r 2>>$OUT/r/err.log | head -8
grep -v -i warn $OUT/r/err.log | tail -3
tar czf $OUT/s20e.tgz -C $OUT r && rm -rf $OUT/r
