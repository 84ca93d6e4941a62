# Sourced by the device scripts (bench/calls/gpu_s*.sh) on the H200 machine, with `.gl` carried: unpacks the
# Vulkan loader debs and installs the wgpu wheels, points the loader at NVIDIA's ICD, puts ${SRC:-src}
# on PYTHONPATH and defines $Z, the `zinc` command line, and `ab` (a bench A/B of code snapshots, below).
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
python3 -m pip install -q --no-deps --no-index .gl/wheels/*cp312*.whl .gl/wheels/pycparser*.whl .gl/wheels/rendercanvas*.whl .gl/wheels/wgpu*.whl >/dev/null 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PYTHONPATH=$PWD/${SRC:-src} PYTHONUNBUFFERED=1
Z="python3 -c 'import sys; from zinc.cli import main; sys.exit(main(sys.argv[1:]))'"

# ab NAME ROUNDS "BENCH ARGS" CODE...: `zinc bench BENCH ARGS --json` in a fresh process per CODE (HEAD: ./src,
# else the snapshot .snap/CODE/src), interleaved, ROUNDS times; JSON to $OUT/NAME-CODE-ROUND.json and one line
# per run: CODE, the first test's name and tok/s, its per-repetition seconds.
ab() {
  name=$1 rounds=$2 args=$3; shift 3
  for i in $(seq "$rounds"); do for v in "$@"; do
    P=$PWD/src; [ "$v" != HEAD ] && P=$PWD/.snap/$v/src
    PYTHONPATH=$P timeout 130 sh -c "$Z bench $args --json" > "$OUT/$name-$v-$i.json" 2> /dev/null
    python3 -c "import json; t=json.load(open('$OUT/$name-$v-$i.json'))['tests'][0]; print('$v', t['name'], round(t['tok_s'], 1), [round(s, 4) for s in t.get('samples_s', [])])" || echo "$v run $i failed"
  done; done
}
