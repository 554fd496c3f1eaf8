# lib.sh - what the shell tests share; each sources it (. tests/lib.sh) with
# the tool under test as its first argument:
#   $tool          the pcbench under test
#   $tmp           a folder of the test's own, removed when it exits
#   $out, $err     the last expect's stdout and stderr
#   ok, bad TEXT   count a check passed, or failed (said on stdout)
#   expect NAME STATUS [TEXT] -- COMMAND...
#                  COMMAND (a program or a shell function) exits STATUS and,
#                  where TEXT is given and not empty, prints it on stdout or
#                  stderr; one still running after EXPECT_TIMEOUT seconds
#                  (default 300) hung, and is killed; with TEST_TIMES=file,
#                  each expect's wall seconds and name are added to file
#   says NAME TEXT the last expect's output holds TEXT (a grep pattern)
#   finish         the "N passed, N failed, N skipped" line scripts/run_tests.sh
#                  sums, and the script's status
tool=$1
pass=0 fail=0 skip=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out err=$tmp/err

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

expect() {
    name=$1 want=$2 text=
    shift 2
    if [ "$1" != "--" ]; then text=$1; shift; fi
    if [ "$1" != "--" ]; then bad "$name: expect NAME STATUS [TEXT] -- COMMAND"; return; fi
    shift
    [ -z "${TEST_TIMES:-}" ] || began=$(date +%s.%N)
    "$@" >"$out" 2>"$err" &
    pid=$!
    (sleep "${EXPECT_TIMEOUT:-300}" && kill -9 $pid) >/dev/null 2>&1 &
    dog=$!
    wait $pid
    rc=$?
    kill $dog 2>/dev/null
    [ -z "${TEST_TIMES:-}" ] ||
        echo "$(date +%s.%N) $began $name" | awk '{ printf "%.2f", $1 - $2; $1 = $2 = ""; print }' >>"$TEST_TIMES"
    if [ "$rc" = "$want" ] && { [ -z "$text" ] || cat "$out" "$err" | grep -qF -- "$text"; }; then
        ok
    else
        bad "$name: exit $rc (want $want)${text:+, want '$text'} in: $(cat "$out" "$err" | tail -c 600)"
    fi
}

says() {
    if cat "$out" "$err" | grep -q -- "$2"; then ok; else
        bad "$1: output lacks '$2': $(cat "$out" "$err" | tail -c 600)"; fi
}

finish() {
    echo "$pass passed, $fail failed, $skip skipped"
    [ "$fail" = 0 ]
}
