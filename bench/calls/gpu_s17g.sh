# Session 17: capture's eager run now takes the capture's paths (graph.py); every family at F16,Q8_0,Q4_K_M in one
# process on a cold Triton cache (as s17e, where gemma3-tiny F16's decode capture failed): all captured?
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1 TRITON_CACHE_DIR=/tmp/tc-cold-$$
timeout 200 python3 -m zinc.backends.cuda.check_families --out $OUT/r --ftypes F16,Q8_0,Q4_K_M 2>&1 | grep -v Warn | grep -v " ok$" | tail -5
python3 -c "import json; print('not captured:', [(r['family'], r['ftype']) for r in json.load(open('$OUT/r/check_families.json'))['rows'] if r.get('graph_captures') == 0])"
