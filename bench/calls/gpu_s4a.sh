# Session 4, call 1: versions, PDL A/B on Qwen3-8B Q4_K_M decode, step profile, CUDA mmvq/graph tests.
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import torch, triton; print(torch.__version__, torch.version.cuda, triton.__version__)"
mkdir -p .real
[ -f .real/q8b.gguf ] || python3 -m zinc.synth qwen3-8b -o .real/q8b.gguf --ftype Q4_K_M -q > /dev/null 2>&1
timeout 240 python3 bench/cuda_pdl_probe.py .real/q8b.gguf --json $OUT/pdl-probe.json 2>&1 | tail -8
timeout 60 python3 bench/cuda_step_profile.py .real/q8b.gguf --out $OUT 2>&1 | sed -n 1,12p
timeout 200 python3 -m pytest -q -x -p no:cacheprovider tests/backends/test_cuda_mmvq.py tests/backends/test_cuda_graph.py 2>&1 | tail -3
