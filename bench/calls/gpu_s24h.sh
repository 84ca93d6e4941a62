# Session 24 (eighth call): are the PDL kernel variants bit-equal to the plain ones? The GPU test of it, and each
# streams-matvec configuration of the Qwen3-8B decode (.ab/pdl_eq.py: down Q4_K / Q6_K, output Q6_K, O, V).
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_mmvq.py -k pdl 2>&1 | tail -3
timeout 150 python3 .ab/pdl_eq.py 2>&1 | grep -v -i warn
