# Session 45, calls d and e (typed on the warm H100 after call c; recorded here): (d) the batched attention's cells a
# step at 16 / 32 (and 32 with 4 stages, 2 splits) at depths 128 / 1,024 / 4,096, then zinc bench tg64 at 8 and 64
# sequences with 32 cells a step (`kseqs.BLOCK_CELLS` patched); (e) with 32 cells a step, the 64-sequence step with the
# plain weights of N 4,096-5,120 and K 4,096 (Q / O, the stacked Q and K) in 64 swapped columns and 4 K-splits against
# today's 8 unswapped, twice each.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /tmp/synth.log 2>&1 &
timeout 100 python3 bench/cuda_seqs_attn_bench.py --depths 128,1024,4096 --configs "32,3,4,0;16,3,4,0;16,2,4,0;32,3,4,2;32,4,4,0" \
  --out $OUT/r 2>&1 | tail -16
wait
timeout 150 python3 -c "import sys; import zinc.backends.cuda.kernels.seqs as s; s.BLOCK_CELLS = 32; from zinc.cli import main; sys.exit(main(sys.argv[1:]))" \
  bench -m .real/q8b.gguf --backend cuda -p 0 -n 64 --parallel 8,64 -r 1 --json > $OUT/r/s45d-q8b.json 2> /tmp/s.log
grep -E "verified|: run|Error" /tmp/s.log | cut -c1-160
for v in base swapqo base2 swapqo2; do
  timeout 60 python3 -c "
import sys, runpy
import zinc.backends.cuda.kernels.seqs as s, zinc.backends.cuda.ops as o
s.BLOCK_CELLS = 32
f = o.tiles_shape
if '$v'.startswith('swap'): o.tiles_shape = lambda n, k, r, g: (64, 4, True) if (not g and k == 4096 and n >= 4096 and n <= 5120 and r > 32) else f(n, k, r, g)
sys.argv = ['p', '.real/q8b.gguf', '--seqs', '64', '--depth', '128', '--steps', '12', '--out', '$OUT/r']; runpy.run_path('bench/cuda_step_profile.py', run_name='__main__')" \
    2>&1 | grep -E "wall|experts_gemm|seq_split|reduce_kernel<128" | sed "s/^/$v /" | cut -c1-110
  mv $OUT/r/step-profile-x64-d128.json $OUT/r/step-profile-q8b-x64-bs32-$v.json
done
