#!/bin/sh
# baseline.sh PCBENCH - the regression gate's baselines: one written on
# purpose and passed against, a baseline of another machine (timing is not
# gated there) or of another toolchain (instruction counts are not), the
# timing gate on the baseline's own machine, a host without valgrind, and a
# missing baseline. tests/regress.sh gates against the committed one; the two
# run side by side.
. "$(dirname "$0")/lib.sh"

expect "a baseline can be written on purpose" 0 -- \
    "$tool" bench --suite quick --problem fps --update-baseline "$tmp/base"
says "with this toolchain's instruction counts" "^Instruction counts of toolchain"
expect "a fresh run passes against it" 0 -- \
    "$tool" bench --suite quick --problem fps --regress "$tmp/base"

expect "another machine passes; timing is not gated there even when asked" 0 -- \
    "$tool" bench --suite quick --problem fps,emd --machine other-host --gate-timing \
    --regress results/baseline
says "it says why timing is not gated" "^timing: not gated: the baseline was measured on"

rm -rf "$tmp/base/instructions"
expect "a baseline of another toolchain gates all but instruction counts" 0 -- \
    "$tool" bench --suite quick --problem fps --regress "$tmp/base"
says "it says so in one line" "^instructions: no baseline for this toolchain"
expect "with --gate-timing, a 4x slower fps/naive fails on the baseline's machine" 1 -- \
    env PCBENCH_FAULT=slow:fps/naive:4 "$tool" bench --suite quick --problem fps \
    --gate-timing --regress "$tmp/base"
says "the timing gate names the ratio" "FAIL: ratio"

expect "without valgrind the gate still runs" 0 -- \
    env PCBENCH_VALGRIND=/nonexistent/valgrind "$tool" bench --suite quick --problem fps \
    --regress results/baseline
says "it says why counts are not gated" "^instructions: not counted (valgrind not found"

expect "no baseline is a failure, not a pass" 1 -- \
    "$tool" bench --suite quick --problem fps --regress "$tmp/none"
says "it says how to make one" "update-baseline $tmp/none"

finish
