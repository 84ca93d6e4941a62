# Prepared in session 25 for the next GPU session (not run yet; after gpu_s26a.sh): deep caches' attention
# configurations (more split programs in flight: 64 splits, 2 pipeline stages) with and without the unmasked whole
# blocks, tg128@16384 A/B in fresh processes; tg128@4096 with one f16 operand each (the 128-cell-step kernel spills
# with hi + lo, offline); every family's tiny model with one f16 operand each in the attention.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
[ -f .real/q8b.gguf ] || python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
ab() { timeout 100 python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log | cut -c1-90; }
H="ATTN_SPLITS=[(256,4,32),(2048,8,64),(8192,16,128),"
ab --label d1 --depth 16384
ab --label s32st2 --depth 16384 --set "${H}(4611686018427387904,32,64,2)]"
ab --label s64st2 --depth 16384 --set "${H}(4611686018427387904,64,64,2)]"
ab --label s64st2full --depth 16384 --set "${H}(4611686018427387904,64,64,2)]" --set ATTN_FULL_LOOP=True
ab --label b128st2f16full --depth 16384 --set "${H}(4611686018427387904,32,128,2)]" --set ATTN_FULL_LOOP=True --set ATTN_HILO=False
ab --label d2 --depth 16384
ab --label hilo4k --depth 4096
ab --label f16ops4k --depth 4096 --set ATTN_HILO=False
rm -f $OUT/r/ab/*.npz
timeout 200 python3 -c "
import sys; from zinc.backends.cuda import ops, check_families as cf; ops.ATTN_HILO = False
sys.exit(cf.main(['--out', '$OUT/r', '--ftypes', 'F16,Q8_0,Q4_K_M']))" > $OUT/r/families.log 2>&1; tail -4 $OUT/r/families.log
