#!/bin/sh
# run_tests.sh BUILD TOOL TESTS... - run every test binary and the CLI tests,
# sum their "N passed, N failed" lines, and end with the total.
build=$1 tool=$2; shift 2
pass=0 fail=0 log=$(mktemp)
trap 'rm -f "$log"' EXIT
run() { # name, command...
    name=$1; shift
    "$@" >"$log" 2>&1; rc=$?
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
    p=${line%% passed*}; f=${line#*, }; f=${f%% failed}
    if [ -z "$line" ]; then p=0; f=1; fi
    if [ $rc -ne 0 ] && [ "$f" = 0 ]; then f=1; fi
    if [ "$f" != 0 ]; then cat "$log"; echo "FAIL $name (exit $rc)"; else echo "ok   $name: $p passed"; fi
    pass=$((pass + p)); fail=$((fail + f))
}
for t in "$@"; do run "$t" "$t"; done
for t in tests/*.sh; do [ -e "$t" ] && run "$t" sh "$t" "$tool"; done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
