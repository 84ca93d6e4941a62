# Session 44, call d (any card, ~4 min): call a cut to what the session's last device time fits (eleven machine
# starts failed): the GPU tests of the PTX tile values (`quant.nibbles_f16`, `six_bits_f16`) and of the tile GEMM;
# the 64-sequence Qwen3-8B step's kernels with the PTX off / on and the splits summed in the launch (session 43 H100:
# 10.908 ms, tile GEMM 8,224 us, torch sums 704 us); zinc bench tg64 of 64 sequences with both on (s43 H100: 5,912.1).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
mkdir -p .real $OUT/r
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /tmp/synth.log 2>&1 &
timeout 100 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE tests/backends/test_cuda_kernels.py \
  tests/backends/test_cuda_experts_gemm.py -k "nibbles or six_bits or experts_gemm_operand or two_steps or glu_split" > $OUT/r/t_d.log 2>&1
echo "== tests rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed|Fatal" $OUT/r/t_d.log | head -12 | cut -c1-300
wait
set_() { echo "import zinc.backends.cuda.ops as o, zinc.backends.cuda.kernels.moe as m; m.NIBBLE_ASM = $1; o.SPLIT_SUMS_IN_LAUNCH = $2"; }
for cfg in "False False" "True False" "True True"; do
  set -- $cfg; echo "== NIBBLE_ASM=$1 SPLIT_SUMS_IN_LAUNCH=$2"
  timeout 50 python3 -c "import sys, runpy; $(set_ $1 $2); sys.argv = ['p', '.real/q8b.gguf', '--seqs', '64', '--depth', '128', '--steps', '12', '--out', '$OUT/r']; runpy.run_path('bench/cuda_step_profile.py', run_name='__main__')" \
    2>&1 | grep -E "wall|experts_gemm|reduce|Error" | cut -c1-110
  mv $OUT/r/step-profile-x64-d128.json $OUT/r/step-profile-q8b-x64-asm$1-sums$2.json
done
timeout 90 python3 -c "import sys; $(set_ True True); from zinc.cli import main; sys.exit(main(sys.argv[1:]))" \
  bench -m .real/q8b.gguf --backend cuda -p 0 -n 64 --parallel 64 -r 1 --json > $OUT/r/s44d_asm_sums.json 2> /tmp/s.log
grep -E "verified|: run|Error" /tmp/s.log | cut -c1-200
