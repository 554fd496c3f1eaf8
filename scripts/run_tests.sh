#!/bin/sh
# run_tests.sh BUILD TOOL TESTS... - run every test binary and the CLI tests,
# the CLI tests that need no timing once more with the sanitized tool
# (ASAN_TOOL), and the fuzz smoke (FUZZ_DIR, FUZZ_SMOKE seconds a target);
# sum their "N passed, N failed[, N skipped]" lines, and end with the total
# "N passed, N failed, N skipped" (skipped: what could not run here, each
# said in a "skip:" line).
#
# TEST_SCRIPTS: the shell tests to run (default: every tests/*.sh but
# wheel.sh, which make test-wheel runs on a wheel it built);
# FUZZ_SMOKE=0 leaves the fuzz smoke out (make check's fast tier).
#
# The tests run TEST_JOBS at a time (default: the number of cores), each
# into its own log, and each is reported as it ends (order of completion),
# with its duration; the five slowest are listed last. The longest start
# first (CTest's way): by the durations the last run left in
# BUILD/test-durations, else the command-line scripts before the unit tests.
# On a GPU host the sanitized tool runs with the GPU hidden
# (CUDA_VISIBLE_DEVICES=): ASan checks the host code, the plain pass the GPU
# paths, and 16 tests sharing one GPU made it the slowest by far. OpenMP
# threads wait passively (OMP_WAIT_POLICY), as tests share the cores. A test still running
# after TEST_TIMEOUT seconds (default 1800) is killed by the watchdog and
# reported as failed, by name. Every test works in its own temporary folder,
# and none times anything against a fixed limit (the gate counts
# instructions), so running side by side changes no verdict.
build=$1 tool=$2; shift 2
pass=0 fail=0 skip=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
jobs=${TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
watchdog=${TEST_TIMEOUT:-1800}
began=$(date +%s)

export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
# A sanitizer's report exits 86, which no test expects of pcbench.
export ASAN_OPTIONS="exitcode=86:detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="exitcode=86:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

# The tests, numbered: <n>.name and <n>.cmd (the command, quoted for eval).
total=0
add() { # cost (seconds expected where no earlier run says), name, command...
    total=$((total + 1))
    cost=$(grep -F " $2" "$build/test-durations" 2>/dev/null | awk -v n="$2" \
        'substr($0, index($0, " ") + 1) == n { c = $1 } END { if (c != "") print c }')
    printf '%s %s\n' "${cost:-$1}" "$total" >>"$dir/costs"
    printf '%s\n' "$2" >"$dir/$total.name"
    shift 2
    for w in "$@"; do printf " '%s'" "$(printf '%s' "$w" | sed "s/'/'\\\\''/g")"; done \
        >"$dir/$total.cmd"
}

report() { # n: sum and print the n-th test's result
    name=$(cat "$dir/$1.name") log=$dir/$1.log rc=$(cat "$dir/$1.rc" 2>/dev/null || echo 1)
    secs=$(cat "$dir/$1.secs" 2>/dev/null || echo "?")
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$log" | tail -n 1)
    p=${line%% passed*}; f=${line#*, }; f=${f%% failed*}
    case $line in *skipped) s=${line##*failed, }; s=${s%% skipped} ;; *) s=0 ;; esac
    if [ -z "$line" ]; then p=0; f=1; s=0; fi
    if [ "$rc" -ne 0 ] && [ "$f" = 0 ]; then f=1; fi
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        cat "$log"; echo "FAIL $name: killed by the watchdog after $watchdog s (TEST_TIMEOUT)"
        f=$((f > 0 ? f : 1))
    elif [ "$f" != 0 ]; then cat "$log"; echo "FAIL $name (exit $rc, $secs s)"
    else
        echo "ok   $name: $p passed$([ "$s" != 0 ] && echo ", $s skipped") ($secs s)"
        grep '^skip: ' "$log" | head -n 3 | sed 's/^/       /'
        more=$(($(grep -c '^skip: ' "$log") - 3))
        [ "$more" -gt 0 ] && echo "       ... and $more more skip lines"
    fi
    printf '%s %s\n' "$secs" "$name" >>"$dir/durations"
    pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
}

# The fuzz smoke first: it takes a fixed time, the others fill the cores.
fuzz=$(ls "${FUZZ_DIR:-$build/fuzz}"/fuzz_* 2>/dev/null | grep -v '\.log$')
[ "${FUZZ_SMOKE:-30}" = 0 ] && fuzz=
if [ -n "$fuzz" ]; then
    # shellcheck disable=SC2086 # one word a target
    add 1000 "fuzz smoke (${FUZZ_SMOKE:-30} s a target)" sh scripts/fuzz.sh "${FUZZ_DIR:-$build/fuzz}" \
        "${FUZZ_SMOKE:-30}" $fuzz
fi
for t in "$@"; do add 10 "$t" "$t"; done
# shellcheck disable=SC2086 # one word a script
for t in ${TEST_SCRIPTS:-tests/*.sh}; do
    case $t in */lib.sh) continue ;; esac   # sourced by the others
    case $t in */wheel.sh) continue ;; esac # make test-wheel's, on a built wheel
    [ -e "$t" ] && add 100 "$t" sh "$t" "$tool"
done
if [ -n "${ASAN_TOOL:-}" ] && [ -x "$ASAN_TOOL" ]; then
    for t in tests/cli.sh tests/defects.sh tests/check.sh tests/cli_io.sh tests/hostile.sh \
        tests/compare.sh; do
        cost=20; case $t in tests/cli.sh | tests/defects.sh) cost=200 ;; esac
        add $cost "$t (sanitized tool)" env CUDA_VISIBLE_DEVICES= sh "$t" "$ASAN_TOOL"
    done
fi
echo "running $total tests, $jobs at a time; each is reported as it ends"

# Two FIFOs: slots holds one token per free slot (a test takes one to start
# and gives it back when it ends); done receives each test's number as it
# ends. The launcher starts the tests in the background while this shell
# reports them.
mkfifo "$dir/slots" "$dir/done" && exec 3<>"$dir/slots" 4<>"$dir/done" || exit 1
i=0
while [ "$i" -lt "$jobs" ]; do echo >&3; i=$((i + 1)); done
sort -rn -k1,1 -s "$dir/costs" | cut -d' ' -f2 >"$dir/order"
(
    while read -r n; do
        read -r _ <&3
        (
            start=$(date +%s)
            eval "timeout -k 10 $watchdog $(cat "$dir/$n.cmd")" >"$dir/$n.log" 2>&1 3>&- 4>&-
            echo $? >"$dir/$n.rc"
            echo $(($(date +%s) - start)) >"$dir/$n.secs"
            echo >&3
            echo "$n" >&4
        ) &
    done <"$dir/order"
    wait
) &
launcher=$!
reported=0
while [ "$reported" -lt "$total" ] && read -r n <&4; do
    report "$n"
    reported=$((reported + 1))
done
wait "$launcher"

if [ "${FUZZ_SMOKE:-30}" = 0 ]; then
    : # not in this tier
elif [ -z "$fuzz" ] && [ -n "${CI:-}" ]; then
    echo "FAIL fuzz smoke: no fuzz target was built (clang with libFuzzer: make fuzz-deps)"
    fail=$((fail + 1))
elif [ -z "$fuzz" ]; then
    echo "skip fuzz smoke: clang with libFuzzer not found (make fuzz-deps installs it)"
    skip=$((skip + 1))
fi
if [ -s "$dir/durations" ]; then
    # the next run's order: this run's durations, and the others' from before
    touch "$build/test-durations" 2>/dev/null &&
        awk 'NR == FNR { d[substr($0, index($0, " ") + 1)] = $0; next }
             !(substr($0, index($0, " ") + 1) in d) { print }
             END { for (n in d) print d[n] }' "$dir/durations" "$build/test-durations" \
            >"$dir/merged" && cp "$dir/merged" "$build/test-durations"
    echo "slowest: $(sort -rn "$dir/durations" | head -n 5 | sed 's/^\([^ ]*\) \(.*\)$/\2 \1 s/' |
        paste -sd ';' - | sed 's/;/, /g'); all $(($(date +%s) - began)) s"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
