# Prepared in session 24 for the next GPU call (not run yet): every family's tiny model against the NumPy backend
# with the PDL decode (python -m zinc.backends.cuda.check_families), and the GPU tests of the matvec, MoE and graph
# files.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p $OUT/r
timeout 300 python3 -m zinc.backends.cuda.check_families --out $OUT/r > $OUT/r/families.log 2>&1; tail -40 $OUT/r/families.log
timeout 280 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_mmvq.py tests/backends/test_cuda_moe_mmvq.py tests/backends/test_cuda_graph.py 2>&1 | tail -3
