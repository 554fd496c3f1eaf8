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
build() { # compiler
    "$1" -std=c++20 -O2 -fPIC -shared -fvisibility=hidden -D_GLIBCXX_USE_CXX11_ABI=1 \
        -Wall -Wextra -Werror -Wno-unused-parameter \
        -isystem "$torch/include" -isystem "$torch/include/torch/csrc/api/include" \
        -isystem "$cuda/include" -I"$root" \
        -o "$out/libpcbench_torch.so" "$root/impl/python/pcbench_torch.cpp" \
        -L"$libdir" -lpcbench -Wl,-rpath,'$ORIGIN/..' \
        -L"$torch/lib" -Wl,--no-as-needed -lc10 -lc10_cuda -ltorch_cpu -ltorch_cuda -ltorch \
        -Wl,--as-needed
}
# A compiler whose C++ runtime is newer than the one the process loads can put
# parts of its own libstdc++ (streams, locales) into the library: two C++
# runtimes in one process, and the first error message formatted by the wrong
# one crashes the interpreter (seen with a newer GCC in /opt beside the
# system's). Such a library is refused; the system's g++ is tried instead.
own_runtime() {
    nm -D --defined-only "$out/libpcbench_torch.so" 2>/dev/null |
        grep -Eq ' (_ZNSt6locale|_ZNSo|_ZNSt8ios_base|_ZNSt7codecvt)'
}
cxx=${CXX:-g++}
build "$cxx"
if own_runtime && [ "$(command -v "$cxx")" != "$(command -v g++)" ]; then
    echo "torch-ops: $cxx put its own C++ runtime into the library; building with g++ instead"
    cxx=g++
    build "$cxx"
fi
if own_runtime; then
    rm -f "$out/libpcbench_torch.so"
    echo "torch-ops: $cxx put its own C++ runtime (libstdc++) into the library, which would crash"
    echo "  the process at its first error; build with the g++ whose libstdc++ PyTorch loads (CXX=g++)"
    exit 1
fi
echo "torch-ops: $out/libpcbench_torch.so (PyTorch $version)"
