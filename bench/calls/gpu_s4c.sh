# Session 4, call 3 (carry .snap = HEAD c0231c6's src + sweep): the mmvq sweep with the per-thread (V1) variants.
export PYTHONPATH=$PWD/.snap/src PYTHONUNBUFFERED=1
timeout 400 python3 .snap/bench/cuda_mmvq_sweep.py --out $OUT 2>&1 | tail -40
