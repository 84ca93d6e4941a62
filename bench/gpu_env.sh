# Sourced by the device scripts (bench/gpu_s4*.sh) on the H200 machine, with `.gl` carried: unpacks the
# Vulkan loader debs and installs the wgpu wheels, points the loader at NVIDIA's ICD, puts ${SRC:-src}
# on PYTHONPATH and defines $Z, the `zinc` command line.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
python3 -m pip install -q --no-deps --no-index .gl/wheels/*cp312*.whl .gl/wheels/pycparser*.whl .gl/wheels/rendercanvas*.whl .gl/wheels/wgpu*.whl >/dev/null 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PYTHONPATH=$PWD/${SRC:-src} PYTHONUNBUFFERED=1
Z="python3 -c 'import sys; from zinc.cli import main; sys.exit(main(sys.argv[1:]))'"
