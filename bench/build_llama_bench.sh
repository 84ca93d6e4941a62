#!/usr/bin/env bash
# Builds llama.cpp's `llama-bench` (CUDA, sm_90) from the llama-cpp-python sdist the anchors used, on a machine
# with nvcc but no GPU, into tmp/llama/llama-bench.xz for `bench/calls/gpu_s32b.sh` (llama.cpp side by side with
# zinc on the device's card). Not part of the engine or its tests: a measuring aid, run by hand.
#   bash bench/build_llama_bench.sh [WORKDIR]   (default /tmp/llama-build; ~1-2 h on 2 cores)
# The development machine's CUDA 13.0 has no cuBLAS and no driver library: cuBLAS comes from the nvidia-cublas
# wheel (headers and libraries copied into the toolkit), and libcuda.so is a stub holding the driver functions
# the objects call (SONAME libcuda.so.1: the device's real driver is loaded at run time). libstdc++ stays dynamic: a
# static one asks for glibc 2.36 (arc4random); this build needs glibc 2.34 and GLIBCXX 3.4.30 (GCC 12) on the device.
set -euo pipefail
W=${1:-/tmp/llama-build}
REPO=$(cd "$(dirname "$0")/.." && pwd)
CUDA=/usr/local/cuda
mkdir -p "$W" && cd "$W"
[ -f llama_cpp_python-0.3.36.tar.gz ] || pip download --no-deps --no-binary :all: llama-cpp-python==0.3.36 -d .
[ -d llama_cpp_python-0.3.36 ] || tar xzf llama_cpp_python-0.3.36.tar.gz
SRC=$W/llama_cpp_python-0.3.36/vendor/llama.cpp
if [ ! -e $CUDA/lib64/libcublas.so ]; then
  pip download --no-deps nvidia-cublas -d cub
  mkdir -p cubx && (cd cubx && unzip -q -o ../cub/*.whl)
  cp cubx/nvidia/cu13/include/* $CUDA/include/
  cp cubx/nvidia/cu13/lib/libcublas.so.13 cubx/nvidia/cu13/lib/libcublasLt.so.13 $CUDA/lib64/
  ln -sf libcublas.so.13 $CUDA/lib64/libcublas.so; ln -sf libcublasLt.so.13 $CUDA/lib64/libcublasLt.so
fi
stub() {  # a libcuda.so defining the given function names
  mkdir -p $CUDA/lib64/stubs
  { echo "void zinc_stub_placeholder(void){}"; for f in "$@"; do echo "void $f(void){}"; done; } > stub.c
  gcc -shared -fPIC -Wl,-soname,libcuda.so.1 -o $CUDA/lib64/stubs/libcuda.so stub.c
}
MADE_STUB=0
if [ ! -e $CUDA/lib64/libcuda.so ] && [ ! -e $CUDA/lib64/stubs/libcuda.so ]; then stub; MADE_STUB=1; fi
cmake -S "$SRC" -B build -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_NATIVE=OFF \
  -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF
cmake --build build --target ggml-cuda -j"$(nproc)"
if [ $MADE_STUB = 1 ]; then  # the driver functions the objects use
  stub $(find build -name '*.o' -path '*ggml-cuda*' -exec nm -u {} + | awk '{print $NF}' | grep -E '^cu[A-Z]' | sort -u)
fi
cmake --build build --target llama-bench -j"$(nproc)"
mkdir -p "$REPO/tmp/llama"
strip -o "$REPO/tmp/llama/llama-bench" build/bin/llama-bench
xz -T0 -9 -kf "$REPO/tmp/llama/llama-bench"
rm "$REPO/tmp/llama/llama-bench"
ls -la "$REPO/tmp/llama"
