#!/bin/sh
# regress.sh PCBENCH - the regression gate, as make test runs it: the quick
# suite must pass against the committed baseline (results/baseline), and a
# deliberately slowed or miscounting implementation must fail it. Nothing
# here may depend on the machine's speed or load: slowdowns are caught by
# instruction counts (the one timing check, in tests/baseline.sh, gates a 4x
# slowdown against a baseline written moments before on the same machine).
# Faults come from PCBENCH_FAULT (see pcbench bench --help).
. "$(dirname "$0")/lib.sh"

expect "quick suite passes the gate against results/baseline" 0 -- \
    "$tool" bench --suite quick --regress results/baseline
says "the gate reports its checks" "^gate: 0 regressions in [1-9]"
says "instruction counts are gated on this toolchain" "^instructions: gated against"
says "timing is information by default" "^timing: CPU-time ratios shown as information"

expect "fps/dp doing twice the work fails the gate" 1 -- \
    env PCBENCH_FAULT=slow:fps/dp:2 "$tool" bench --suite quick --problem fps \
    --regress results/baseline
says "the slowdown is named" "dp .*instructions .*FAIL: +100.0% instructions per compute"
says "the refresh command is printed" "update-baseline results/baseline"

expect "fps/dp doing a quarter more work fails the gate" 1 -- \
    env PCBENCH_FAULT=slow:fps/dp:1.25 "$tool" bench --suite quick --problem fps \
    --regress results/baseline
says "the 25% is measured exactly" "FAIL: +25.0% instructions per compute"

expect "a miscounting nn/naive fails the gate" 1 -- \
    env PCBENCH_FAULT=count:nn/naive "$tool" bench --suite quick --problem nn --impl naive \
    --regress results/baseline
says "the changed counter is named" "deterministic work changed"

finish
