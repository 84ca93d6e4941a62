# Session 33, call e (the kernel it measures is in commit be17534 only: it lost and was taken out): the GLU matvec writing its output on 8 bits for the down projection (`ops.GLU_Q8`: the last
# program of each 32 outputs quantizes them; no quantize launch, 36 fewer a tg128 step): its GPU tests, decode-step
# A/B pairs against GLU_Q8=False, then every family's tiny model at Q4_K_M and Q6_K with it on.
export AB_TIMEOUT=45
. bench/calls/ab_env.sh
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/backends/test_cuda_mmvq.py -k "q8_output or pdl or glu or streams" 2>&1 | tail -3
ab --label g0
ab --label gnoq8 --set GLU_Q8=False
ab --label g0b
ab --label gnoq8b --set GLU_Q8=False
rm -f $OUT/r/ab/*.npz
timeout 100 python3 -m zinc.backends.cuda.check_families --out $OUT/r/cf --ftypes Q4_K_M,Q6_K 2>&1 | tail -4
