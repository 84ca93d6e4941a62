# Session 17: gemma3-tiny F16's decode capture failed when it ran after the other families in one check_families
# process at F16,Q8_0,Q4_K_M (not alone, not at F16 only): that sequence on HEAD before the session (oldsrc/, 6d24b2f).
export PYTHONUNBUFFERED=1
PYTHONPATH=$PWD/oldsrc/src timeout 90 python3 -m zinc.backends.cuda.check_families --out $OUT/r --ftypes F16,Q8_0,Q4_K_M 2>&1 | grep -v Warn | grep -v " ok$" | tail -5
python3 -c "import json; print([(r['family'], r['ftype']) for r in json.load(open('$OUT/r/check_families.json'))['rows'] if r.get('graph_captures') == 0])"
