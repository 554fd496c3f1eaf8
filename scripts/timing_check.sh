#!/bin/sh
# timing_check.sh PCBENCH OUT [PROBLEM/IMPL] [SUITE] [FILTER] - does the
# statistical comparison tell a real 10% slowdown from noise on this machine?
# Times PROBLEM/IMPL (default fps/dp) on SUITE (default quick) three times
# into OUT: twice the same build (a, b), once with the compute repeated 1.1
# times on average (PCBENCH_FAULT=slow:PROBLEM/IMPL:1.1). Then
#   pcbench compare a b                   must find nothing slower, and
#   pcbench compare a slow --tolerance 0.05  must find it significantly slower.
# Writes OUT/timing-check.txt. Timing depends on a quiet machine, so this is
# not part of make test (tests/compare.sh checks the same path with a 3x
# slowdown); run it on the machine whose results you gate: make timing-check.
tool=${1:?usage: timing_check.sh PCBENCH OUT [PROBLEM/IMPL] [SUITE] [FILTER]}
out=${2:?usage: timing_check.sh PCBENCH OUT [PROBLEM/IMPL] [SUITE] [FILTER]}
target=${3:-fps/dp}
suite=${4:-quick}
filter=${5:-}
problem=${target%%/*}
impl=${target#*/}
log=$out/timing-check.txt
rm -rf "$out/runs"
mkdir -p "$out/runs" || exit 1
run() { # name, environment assignments...
    name=$1
    shift
    env "$@" "$tool" bench --suite "$suite" --problem "$problem" --impl "$impl" \
        ${filter:+--filter "$filter"} --results "$out/runs" --machine "$name" >/dev/null
}
fail=0
{
    echo "# timing check: $target, suite $suite${filter:+, filter $filter}, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "# source $(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown); $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
} >"$log"
run a PCBENCH_NONE=1 && run b PCBENCH_NONE=1 && run slow "PCBENCH_FAULT=slow:$target:1.1" || {
    echo "timing_check: a run failed" | tee -a "$log"
    exit 1
}
"$tool" compare "$out/runs/a" "$out/runs/b" --suite "$suite" >>"$log" 2>&1
same=$?
"$tool" compare "$out/runs/a" "$out/runs/slow" --suite "$suite" --tolerance 0.05 >>"$log" 2>&1
slow=$?
if [ "$same" -eq 0 ]; then
    echo "ok: the same build twice: nothing significantly slower" >>"$log"
else
    echo "FAIL: the same build twice was called slower (exit $same)" >>"$log"
    fail=1
fi
if [ "$slow" -eq 1 ]; then
    echo "ok: the planted 10% slowdown was found significant and failed the comparison" >>"$log"
else
    echo "FAIL: the planted 10% slowdown was not found (exit $slow)" >>"$log"
    fail=1
fi
cat "$log"
exit $fail
