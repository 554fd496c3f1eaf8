#!/bin/sh
# torch-ops.sh LIBDIR [TORCH_DIR] - build pcbench's compiled PyTorch operators
# (impl/python/pcbench_torch.cpp) against one PyTorch: the one at TORCH_DIR
# (an unpacked torch package folder), else the one python3 imports. The
# library lands in LIBDIR/torch-<its version>/libpcbench_torch.so, beside
# LIBDIR/libpcbench.so, which it links to ($ORIGIN/..): the package loads it
# only under that same PyTorch version. Needs g++ and the CUDA headers.
set -eu
libdir=$1
torch=${2:-$(${PYTHON:-python3} -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2>/dev/null)} ||
    { echo "torch-ops: no PyTorch importable here (or give its folder)"; exit 1; }
version=$(sed -n "s/^__version__ = '\(.*\)'$/\1/p" "$torch/version.py")
[ -n "$version" ] || { echo "torch-ops: no version in $torch/version.py"; exit 1; }
cuda=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")}
[ -f "$cuda/include/cuda_runtime_api.h" ] || { echo "torch-ops: no CUDA headers under $cuda"; exit 1; }
out=$libdir/torch-$version
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
# C++20: recent PyTorch needs it (2.15 does). PyTorch's wheels use the C++11 string ABI; -Wl,--no-as-needed keeps
# libtorch_cuda, whose loading registers the CUDA device hooks.
${CXX:-g++} -std=c++20 -O2 -fPIC -shared -fvisibility=hidden -D_GLIBCXX_USE_CXX11_ABI=1 \
    -Wall -Wextra -Werror -Wno-unused-parameter \
    -isystem "$torch/include" -isystem "$torch/include/torch/csrc/api/include" \
    -isystem "$cuda/include" \
    -o "$out/libpcbench_torch.so" "$root/impl/python/pcbench_torch.cpp" \
    -L"$libdir" -lpcbench -Wl,-rpath,'$ORIGIN/..' \
    -L"$torch/lib" -Wl,--no-as-needed -lc10 -lc10_cuda -ltorch_cpu -ltorch_cuda -ltorch \
    -Wl,--as-needed
echo "torch-ops: $out/libpcbench_torch.so (PyTorch $version)"
