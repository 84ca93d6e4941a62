# Session 3, call C: the other presets' benches (models made by call A in .real/); part2 of the Gemma file rides along.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
Z="python3 -c 'import sys; from zinc.cli import main; sys.exit(main(sys.argv[1:]))'"
cp .real/part* /tmp/g/ 2>/dev/null
for m in g4-31b q35moe goss; do
  timeout 170 sh -c "$Z bench -m .real/$m.gguf --backend cuda -p 512 -n 128 -r 2 --json" > $OUT/bench-$m.json 2> $OUT/bench-$m.log; tail -3 $OUT/bench-$m.log
done
