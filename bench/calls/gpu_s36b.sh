# Prepared in session 35: only on an H200 (else it stops at once), the other three models with the current
# code (their standing numbers are session 19's: Qwen3.5-35B-A3B tg128 521.1, GPT-OSS 20B 400.3, Gemma 4 31B 129.2),
# zinc bench pp512 + tg128 each, and Qwen3.5-35B-A3B at depth 16384 (anchor 228.7). About 6 minutes.
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo "not an H200"; exit 0; }
. bench/calls/ab_env.sh
python3 -m zinc.synth qwen35-35b-a3b -o .real/q35moe.gguf --ftype Q4_K_M -q > $OUT/r/synth2.log 2>&1 &
python3 -m zinc.synth gpt-oss-20b -o .real/goss.gguf --ftype MXFP4_MOE -q >> $OUT/r/synth2.log 2>&1 &
python3 -m zinc.synth gemma4-31b -o .real/g4-31b.gguf --ftype Q4_K_M -q >> $OUT/r/synth2.log 2>&1 &
wait; ls -la .real; date
zbm() { local m=$1 n=$2; shift 2; timeout 150 python3 -m zinc.cli bench -m .real/$m --backend cuda "$@" -r 3 --json \
  > $OUT/r/$n.json 2> $OUT/r/$n.log; pp $OUT/r/$n.json; date; }
zbm q35moe.gguf s36_h200_qwen35moe -p 512 -n 128
zbm q35moe.gguf s36_h200_qwen35moe_d16384 -n 128 -d 16384
zbm goss.gguf s36_h200_gptoss -p 512 -n 128
zbm g4-31b.gguf s36_h200_gemma4_31b -p 512 -n 128
