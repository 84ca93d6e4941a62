# Sourced (`. bench/calls/ab_env.sh`) by the call scripts from session 30's call d on: the environment, the GPU's
# name, the synthetic Qwen3-8B Q4_K_M model (made once a machine, in .real), and
#   ab ARGS...  bench/cuda_tree_ab.py on that model in a fresh process (AB_TIMEOUT s, default 110), its line cut to
#               AB_COLS characters (default 100), logs in $OUT/r/err.log;
#   pp FILE     one line of a `zinc bench --json` file: device, verified, (test, tok/s, sd) each;
#   zb NAME ARGS...  `zinc bench` of that model on CUDA (3 runs, ARGS: -p/-n/-d) into $OUT/r/NAME.json and .log,
#               then its pp line (from session 32's calls on);
#   sc LABEL ENTRIES  ab with `mmvq.SHAPE_CONFIG` set to {ENTRIES} (from session 35's calls on);
#   L           the cell limit of the last ATTN_SPLITS row (1 << 62).
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
[ -f .real/q8b.gguf ] || python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > $OUT/r/synth.log 2>&1
ab() { timeout "${AB_TIMEOUT:-110}" python3 bench/cuda_tree_ab.py .real/q8b.gguf --out $OUT/r/ab "$@" 2>>$OUT/r/err.log | cut -c1-"${AB_COLS:-100}"; }
pp() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['device'], d['verify']['ok'], [(t['name'], round(t['tok_s'], 1), round(t['tok_s_sd'], 1)) for t in d['tests']])" "$1"; }
L=4611686018427387904
zb() { local n=$1; shift; timeout 150 python3 -m zinc.cli bench -m .real/q8b.gguf --backend cuda "$@" -r 3 --json \
  > $OUT/r/$n.json 2> $OUT/r/$n.log; pp $OUT/r/$n.json; date; }
sc() { local l=$1; shift; ab --label "$l" --set "mmvq.SHAPE_CONFIG={$*}"; }
