# Session 9, call 7: every CUDA test on the GPU with the final code (the streams form also in EXPERT_CONFIG).
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
timeout 280 python3 -m pytest -q -p no:cacheprovider tests/backends/ -k cuda 2>&1 | tail -3
