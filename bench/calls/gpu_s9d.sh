# Session 9, call 4 (carry .snap): every CUDA test with the V 1 form gone (kernels/dot4.py shared by mmvq and mmvs);
# then why the L2 prefetch trial lost (bench/cuda_l2_prefetch_check.py on the trial's tree, 6985db3, carried as .snap/pf).
export PYTHONUNBUFFERED=1
timeout 280 env PYTHONPATH=$PWD/src python3 -m pytest -q -p no:cacheprovider tests/backends/ -k cuda > $OUT/tests.log 2>&1; tail -2 $OUT/tests.log
timeout 120 env PYTHONPATH=$PWD/.snap/pf/src python3 bench/cuda_l2_prefetch_check.py --out $OUT 2>&1 | tail -20
