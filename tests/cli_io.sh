#!/bin/sh
# cli_io.sh PCBENCH - the command line on bad and good input files: every
# corpus file makes `pcbench fps` exit with status 3 (bad input) and name the
# file on stderr; a generated lidar sweep round-trips through a PLY file.
tool=$1
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
no() { fail=$((fail + 1)); echo "FAIL: $*"; }

for f in tests/corpus/*; do
    case $f in */EXPECTED.tsv | */make_corpus.py) continue ;; esac
    "$tool" fps -i "$f" -m 1 >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ $rc -eq 3 ] && grep -qF "$f" "$tmp/err"; then ok; else no "$f: exit $rc, stderr: $(cat "$tmp/err")"; fi
done

for f in tests/data/*; do
    if "$tool" fps -i "$f" -m 3 >"$tmp/out" 2>"$tmp/err" && [ "$(wc -l <"$tmp/out")" -eq 3 ]; then
        ok
    else
        no "$f: $(cat "$tmp/err")"
    fi
done

if "$tool" gen lidar -n 120000 -o "$tmp/s.ply" && "$tool" fps -i "$tmp/s.ply" -m 16 >"$tmp/out" &&
    [ "$(wc -l <"$tmp/out")" -eq 16 ]; then ok; else no "gen lidar + fps"; fi

# The natural sweep, and determinism through the file: same seed, same bytes.
if "$tool" gen lidar -n 0 --seed 4 -o "$tmp/a.ply" && "$tool" gen lidar -n 0 --seed 4 -o "$tmp/b.ply" &&
    cmp -s "$tmp/a.ply" "$tmp/b.ply"; then ok; else no "gen lidar -n 0 is not reproducible"; fi

# A missing file is an I/O error (status 5) naming the path.
"$tool" fps -i "$tmp/missing.ply" -m 1 2>"$tmp/err"
rc=$?
if [ $rc -eq 5 ] && grep -qF "missing.ply" "$tmp/err"; then ok; else no "missing file: exit $rc"; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
