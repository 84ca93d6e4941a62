# Session 31, call k: every family's tiny model against the NumPy backend (check_families, F16 / Q8_0 / Q4_K_M) on
# the final tree (4 splits of 32 cells unrolled under 256 cells).
. bench/calls/ab_env.sh
timeout 230 python3 -m zinc.backends.cuda.check_families --out $OUT/r --ftypes F16,Q8_0,Q4_K_M > $OUT/r/families.log 2>&1; grep -v Warn $OUT/r/families.log | grep -v " ok$" | tail -6
