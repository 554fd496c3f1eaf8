#!/bin/sh
# run_tests.sh BUILD TOOL TESTS... - run every test binary and the CLI tests,
# the CLI tests that need no timing once more with the sanitized tool
# (ASAN_TOOL), and the fuzz smoke (FUZZ_DIR, FUZZ_SMOKE seconds a target);
# sum their "N passed, N failed[, N skipped]" lines, and end with the total
# "N passed, N failed, N skipped" (skipped: what could not run here, each
# said in a "skip:" line).
build=$1 tool=$2; shift 2
pass=0 fail=0 skip=0 log=$(mktemp)
trap 'rm -f "$log"' EXIT
run() { # name, command...
    name=$1; shift
    "$@" >"$log" 2>&1; rc=$?
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$log" | tail -n 1)
    p=${line%% passed*}; f=${line#*, }; f=${f%% failed*}
    case $line in *skipped) s=${line##*failed, }; s=${s%% skipped} ;; *) s=0 ;; esac
    if [ -z "$line" ]; then p=0; f=1; s=0; fi
    if [ $rc -ne 0 ] && [ "$f" = 0 ]; then f=1; fi
    if [ "$f" != 0 ]; then cat "$log"; echo "FAIL $name (exit $rc)"
    else
        echo "ok   $name: $p passed$([ "$s" != 0 ] && echo ", $s skipped")"
        grep '^skip: ' "$log" | head -n 3 | sed 's/^/       /'
        more=$(($(grep -c '^skip: ' "$log") - 3))
        [ "$more" -gt 0 ] && echo "       ... and $more more skip lines"
    fi
    pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
}
for t in "$@"; do run "$t" "$t"; done
for t in tests/*.sh; do [ -e "$t" ] && run "$t" sh "$t" "$tool"; done

# A sanitizer's report exits 86, which no test expects of pcbench.
export ASAN_OPTIONS="exitcode=86:detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="exitcode=86:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
if [ -n "${ASAN_TOOL:-}" ] && [ -x "$ASAN_TOOL" ]; then
    for t in tests/cli.sh tests/check.sh tests/cli_io.sh tests/hostile.sh; do
        run "$t (sanitized tool)" sh "$t" "$ASAN_TOOL"
    done
fi

fuzz=$(ls "${FUZZ_DIR:-$build/fuzz}"/fuzz_* 2>/dev/null | grep -v '\.log$')
if [ -n "$fuzz" ]; then
    # shellcheck disable=SC2086 # one word a target
    run "fuzz smoke (${FUZZ_SMOKE:-30} s a target)" sh scripts/fuzz.sh "${FUZZ_DIR:-$build/fuzz}" \
        "${FUZZ_SMOKE:-30}" $fuzz
elif [ -n "${CI:-}" ]; then
    echo "FAIL fuzz smoke: no fuzz target was built (clang with libFuzzer: make fuzz-deps)"
    fail=$((fail + 1))
else
    echo "skip fuzz smoke: clang with libFuzzer not found (make fuzz-deps installs it)"
    skip=$((skip + 1))
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
