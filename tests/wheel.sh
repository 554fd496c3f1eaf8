#!/bin/sh
# wheel.sh DIST - the wheel make wheel left in DIST, installed by pip into a
# clean folder (no build, no compiler, no index) and the Python package's
# tests run there, away from the checkout: the library they load must be the
# wheel's (PCBENCH_LIBRARY unset, the checkout off the path). numpy and
# pytest come from the host or .deps/python (make deps). Prints the usual
# "N passed, N failed" line; exits 1 on a failure.
dist=${1:-dist}
root=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python3}
fail() { echo "FAIL: $1"; echo "0 passed, 1 failed"; exit 1; }
set -- "$root/$dist"/pcbench-*-py3-none-manylinux*_x86_64.whl
[ -e "$1" ] || set -- "$dist"/pcbench-*-py3-none-manylinux*_x86_64.whl
[ -e "$1" ] || fail "no manylinux wheel in $dist (make wheel)"
whl=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PY" -m pip install -q --disable-pip-version-check --no-deps --no-index --target "$tmp/site" \
    "$whl" >"$tmp/pip.log" 2>&1 || fail "pip install $whl: $(tail -3 "$tmp/pip.log")"
# pip install 'pcbench[numpy]' must bring numpy: each extra's needs in METADATA
meta=$("$PY" -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]);
print(z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode())' "$whl")
for need in 'Requires-Dist: numpy; extra == "numpy"' 'Requires-Dist: torch; extra == "torch"'; do
    printf '%s\n' "$meta" | grep -qxF "$need" || fail "the wheel's METADATA lacks $need"
done
cp "$root/tests/test_python.py" "$root/tests/test_ragged.py" "$root/tests/misuse.py" "$tmp/"
cd "$tmp" || fail "no $tmp"
unset PCBENCH_LIBRARY
export PYTHONPATH="$tmp/site:$root/.deps/python"
lib=$("$PY" -c 'import pcbench; print(pcbench._n.lib._name)' 2>&1) ||
    fail "import pcbench from the wheel: $lib"
case $lib in
"$tmp"/site/*) ;;
*) fail "pcbench loaded $lib, not the wheel's library" ;;
esac
"$PY" -m pytest -q -p no:cacheprovider -rs test_python.py test_ragged.py >"$tmp/pytest.log" 2>&1
rc=$?
count() { grep -Eo "[0-9]+ $1" "$tmp/pytest.log" | tail -n 1 | cut -d' ' -f1; }
pass=$(count passed) failed=$(count failed) skip=$(count skipped)
pass=${pass:-0} failed=${failed:-0} skip=${skip:-0}
if [ "$rc" -ne 0 ] || [ "$failed" != 0 ]; then cat "$tmp/pytest.log"; [ "$failed" = 0 ] && failed=1; fi
echo "wheel $(basename "$whl"): its library loaded from the install folder"
echo "$pass passed, $failed failed, $skip skipped"
[ "$failed" = 0 ]
