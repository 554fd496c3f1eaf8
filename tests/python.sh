#!/bin/sh
# python.sh PCBENCH - the Python package's tests (tests/test_python.py, test_ragged.py, and
# tests/test_torch_ops.py and test_compat.py where torch is importable) with
# pytest, on the shared library that make test builds beside the tool
# (BUILD/pic/libpcbench.so): numpy everywhere, torch's where it is
# importable, CUDA's where torch sees a GPU. numpy and pytest come from the
# host or from .deps/python (make deps); without them the tests are skipped
# and said, except in CI.
tool=$1
root=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python3}
export PYTHONPATH="$root/impl/python:$root/.deps/python${PYTHONPATH:+:$PYTHONPATH}"
export PCBENCH_LIBRARY="$(cd "$(dirname "$tool")" && pwd)/pic/libpcbench.so"
if ! "$PY" -c 'import numpy, pytest' 2>/dev/null; then
    if [ -n "${CI:-}" ]; then
        echo "FAIL: numpy and pytest are not importable by $PY (make deps installs them)"
        echo "0 passed, 1 failed"
        exit 1
    fi
    echo "skip: the Python package's tests: numpy or pytest is not importable by $PY (make deps)"
    echo "0 passed, 0 failed, 1 skipped"
    exit 0
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$PY" -m pytest -q -p no:cacheprovider -rs "$root/tests/test_python.py" "$root/tests/test_ragged.py" \
    "$root/tests/test_torch_ops.py" "$root/tests/test_compat.py" "$root/tests/test_pcbstats.py" >"$log" 2>&1
rc=$?
count() { grep -Eo "[0-9]+ $1" "$log" | tail -n 1 | cut -d' ' -f1; }
pass=$(count passed) fail=$(count failed) skip=$(count skipped) errors=$(count error)
pass=${pass:-0} fail=$((${fail:-0} + ${errors:-0})) skip=${skip:-0}
if [ "$rc" -ne 0 ] || [ "$fail" != 0 ]; then cat "$log"; [ "$fail" = 0 ] && fail=1; fi
# what could not run here, said once a reason
grep '^SKIPPED' "$log" | sed 's/^SKIPPED \[[0-9]*\] [^:]*:[0-9]*: /skip: /' | sort -u
echo "$pass passed, $fail failed, $skip skipped"
