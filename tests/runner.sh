#!/bin/sh
# runner.sh PCBENCH - scripts/run_tests.sh itself, on planted tests: each is
# reported as it ends (a quick one before a slow one started first), with
# its duration; a failing one is named; one that runs past TEST_TIMEOUT is
# killed by the watchdog and reported as failed, by name; the slowest are
# listed; the totals add up; the next run starts the longest first.
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
plant() { # name, body
    printf '#!/bin/sh\n%s\n' "$2" >"$tmp/$1.sh"
}
plant slow 'sleep 3; echo "2 passed, 0 failed"'
plant quick 'echo "3 passed, 0 failed, 1 skipped"'
plant wrong 'echo "FAIL: planted"; echo "1 passed, 1 failed"; exit 1'
plant hangs 'sleep 300; echo "1 passed, 0 failed"'
expect "planted tests" 1 -- env -u ASAN_TOOL -u FUZZ_DIR -C "$root" TEST_JOBS=4 TEST_TIMEOUT=6 FUZZ_SMOKE=0 \
    TEST_SCRIPTS="$tmp/slow.sh $tmp/quick.sh $tmp/wrong.sh $tmp/hangs.sh" \
    sh scripts/run_tests.sh "$tmp" "$tool"
says "the quick test is reported" "^ok   $tmp/quick.sh: 3 passed, 1 skipped ([0-9]* s)"
q=$(grep -n "quick.sh:" "$out" | cut -d: -f1) s=$(grep -n "slow.sh:" "$out" | cut -d: -f1)
if [ -n "$q" ] && [ -n "$s" ] && [ "$q" -lt "$s" ]; then ok
else bad "not reported as they end: quick at line $q, slow (started first) at $s"; fi
says "a failing test named" "^FAIL $tmp/wrong.sh (exit 1"
says "the watchdog's kill named" "^FAIL $tmp/hangs.sh: killed by the watchdog after 6 s"
says "the slowest listed" "^slowest: $tmp/hangs.sh"
says "the totals" "^6 passed, 2 failed, 1 skipped$"
if grep -q "^[0-9]* $tmp/slow.sh$" "$tmp/test-durations"; then ok
else bad "durations not kept for the next run: $(cat "$tmp/test-durations")"; fi
# The next run starts the longest first, by those durations: one at a time,
# slow (3 s last time) before quick, though quick comes first on the line.
expect "longest first" 0 -- env -u ASAN_TOOL -u FUZZ_DIR -C "$root" TEST_JOBS=1 FUZZ_SMOKE=0 \
    TEST_SCRIPTS="$tmp/quick.sh $tmp/slow.sh" sh scripts/run_tests.sh "$tmp" "$tool"
q=$(grep -n "quick.sh:" "$out" | cut -d: -f1) s=$(grep -n "slow.sh:" "$out" | cut -d: -f1)
if [ -n "$q" ] && [ -n "$s" ] && [ "$s" -lt "$q" ]; then ok
else bad "not the longest first: slow at line $s, quick at $q"; fi
finish
