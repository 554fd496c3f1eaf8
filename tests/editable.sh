#!/bin/sh
# editable.sh PCBENCH - the package's build backend as pip drives it from a
# checkout: its metadata comes without building anything (pip's "Preparing
# metadata" is instant), and `pip install -e ./impl/python` (PEP 660) gives a
# package that imports from this checkout and loads its build/pic library.
# The editable install runs in a virtual environment (with the system's site
# packages, for numpy); where python3 has no venv or pip, it is skipped and said.
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python3}
meta=$(MAKE=false "$PY" -c 'import sys; sys.path.insert(0, sys.argv[1]); import pcbench_build as b
print(b.prepare_metadata_for_build_wheel(sys.argv[2]))' "$root/impl/python" "$tmp" 2>&1)
case $meta in
pcbench-*.dist-info) ok ;;
*) bad "prepare_metadata_for_build_wheel built or failed (MAKE=false): $meta" ;;
esac
if grep -qxF 'Requires-Dist: numpy; extra == "numpy"' "$tmp/$meta/METADATA" 2>/dev/null; then ok
else bad "the prepared METADATA lacks numpy's extra: $(cat "$tmp/$meta/METADATA" 2>&1)"; fi
if "$PY" -m venv --system-site-packages "$tmp/venv" >"$tmp/venv.log" 2>&1 &&
    "$tmp/venv/bin/python" -m pip --version >/dev/null 2>&1; then
    expect "pip install -e ./impl/python" 0 -- env -u PCBENCH_LIBRARY -u PYTHONPATH \
        "$tmp/venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps --no-index \
        -e "$root/impl/python"
    expect "the editable package imports" 0 -- env -u PCBENCH_LIBRARY -C "$tmp" \
        PYTHONPATH="$root/.deps/python" "$tmp/venv/bin/python" -c \
        'import pcbench; print(pcbench.__file__); print(pcbench._n.lib._name)'
    says "from this checkout" "^$root/impl/python/pcbench/__init__.py"
    says "with its library" "^$root/build/pic/libpcbench.so"
else
    echo "skip: pip install -e: $PY has no venv with pip here ($(tail -1 "$tmp/venv.log"))"
    skip=$((skip + 1))
fi
finish
